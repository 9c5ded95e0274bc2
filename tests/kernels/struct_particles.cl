/* An array of structs in __global memory, updated through helpers taking struct pointers. */
typedef struct {
    float x, y;
    float vx, vy;
    int alive;
    int bounces;
} particle;

void advance(__global particle *p, float dt)
{
    p->x += p->vx * dt;
    p->y += p->vy * dt;
    if (p->y < 0.0f) {
        p->y = -p->y;
        p->vy = -p->vy;
        p->bounces++;
    }
}

float energy(const particle *p)
{
    return 0.5f * (p->vx * p->vx + p->vy * p->vy);
}

__kernel void struct_particles(__global particle *ps, __global float *e, const float dt, const int n)
{
    int i = get_global_id(0);
    if (i >= n || !ps[i].alive)
        return;
    advance(&ps[i], dt);
    advance(ps + i, dt);
    particle local_copy = ps[i];
    e[i] = energy(&local_copy);
}
