typedef struct { float x, y; } point;

__kernel void k(__global point *p)
{
    p[0].z = 1.0f;
}
