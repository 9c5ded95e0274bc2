/* A single work-item task: in-place insertion sort of a whole buffer (global size 1). */
__kernel void task_sort(__global int *data, const int n)
{
    for (int k = 1; k < n; k++) {
        int v = data[k];
        int j = k - 1;
        while (j >= 0 && data[j] > v) {
            data[j + 1] = data[j];
            j--;
        }
        data[j + 1] = v;
    }
}
