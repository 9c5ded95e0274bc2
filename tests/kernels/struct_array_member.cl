/* Structs with array members and mixed-size fields in __global memory, and sizeof. */
typedef struct {
    float v[3];
    int tag;
    short s;
    char c;
} record;

__kernel void struct_array_member(__global const record *in, __global record *out, __global int *sizes)
{
    int i = get_global_id(0);
    record r = in[i];
    float s = 0.0f;
    for (int k = 0; k < 3; k++)
        s += r.v[k];
    __global record *o = &out[i];
    o->v[0] = s;
    o->v[1] = r.v[2] - r.v[0];
    o->v[2] = (float)r.tag;
    o->tag = r.tag * 2 + r.c;
    o->s = (short)(r.s - 1);
    o->c = (char)(r.c + 1);
    if (i == 0) {
        sizes[0] = sizeof(record);
        sizes[1] = sizeof(r.v);
        sizes[2] = sizeof(long) + sizeof(double) * 10;
        sizes[3] = sizeof(uchar16) + sizeof(short2);
    }
}
