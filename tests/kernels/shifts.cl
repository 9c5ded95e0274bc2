/* Shifts: OpenCL takes the count modulo the bit width; >> is arithmetic for signed types. */
__kernel void shifts(__global const int *a, __global const uint *ua,
                     __global const long *la, __global const ulong *ula,
                     __global const int *count,
                     __global int *si, __global uint *su,
                     __global long *sl, __global ulong *sul)
{
    int i = get_global_id(0);
    int c = count[i];
    si[2 * i] = a[i] << c;
    si[2 * i + 1] = a[i] >> c;
    su[2 * i] = ua[i] << c;
    su[2 * i + 1] = ua[i] >> c;
    sl[2 * i] = la[i] << c;
    sl[2 * i + 1] = la[i] >> c;
    sul[2 * i] = ula[i] << c;
    sul[2 * i + 1] = ula[i] >> c;
}
