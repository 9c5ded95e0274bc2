/* Helpers returning structs by value, struct initialiser lists, structs of vectors. */
typedef struct { float2 pos; float mass; int id; } body;

static body make_body(float x, float y, float m, int id)
{
    body b = {(float2)(x, y), m, id};
    return b;
}

static body heavier(body a, body b)
{
    return a.mass >= b.mass ? a : b;
}

__kernel void struct_return(__global const float *xs, __global float *out, __global int *ids)
{
    int i = get_global_id(0);
    body a = make_body(xs[3 * i], xs[3 * i + 1], xs[3 * i + 2], i);
    body b = make_body(-xs[3 * i + 1], xs[3 * i], 1.0f, -i);
    body h = heavier(a, b);
    out[3 * i] = h.pos.x;
    out[3 * i + 1] = h.pos.y;
    out[3 * i + 2] = h.mass;
    ids[i] = h.id;
}
