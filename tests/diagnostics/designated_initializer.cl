typedef struct { float x, y; } point;

__kernel void k(__global point *p)
{
    point q = { .y = 1.0f, .x = 2.0f };
    p[0] = q;
}
