/* Struct layout with OpenCL alignments: a float4 member aligns to 16, a double to 8. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef struct {
    char tag;          /* offset 0 */
    float4 pos;        /* offset 16 */
    double mass;       /* offset 32 */
    short2 cell;       /* offset 40 */
} item;                /* size 48 */

__kernel void struct_align(__global const item *in, __global item *out, __global int *layout)
{
    int i = get_global_id(0);
    item t = in[i];
    t.pos = t.pos.wzyx * (float)t.tag;
    t.mass = t.mass * 2.0 + t.cell.x;
    t.cell = t.cell.yx;
    t.tag = (char)(t.tag + 1);
    out[i] = t;
    if (i == 0) {
        layout[0] = sizeof(item);
        layout[1] = (int)((__global char *)&in[0].pos - (__global char *)&in[0]);
        layout[2] = (int)((__global char *)&in[0].mass - (__global char *)&in[0]);
        layout[3] = (int)((__global char *)&in[0].cell - (__global char *)&in[0]);
    }
}
