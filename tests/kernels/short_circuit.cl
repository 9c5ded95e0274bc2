/* && and || short-circuit: the right side must not run (it would read out of bounds). */
__kernel void short_circuit(__global const int *idx, __global const int *table,
                            __global int *out, const int tsize)
{
    int i = get_global_id(0);
    int k = idx[i];
    int ok = (k >= 0 && k < tsize && table[k] > 0);
    int bad = (k < 0 || k >= tsize || table[k] == 0);
    int v = 0;
    if (ok || (k >= 0 && k < tsize && table[k] < -50))
        v = table[k];
    out[3 * i] = ok;
    out[3 * i + 1] = bad;
    out[3 * i + 2] = v + !ok;
}
