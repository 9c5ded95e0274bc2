/* A 3-D NDRange: a volume filled from its coordinates and a 3-D neighbour difference. */
__kernel void ndrange_3d(__global const float *vol, __global float *out, __global int *ids)
{
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t nx = get_global_size(0), ny = get_global_size(1), nz = get_global_size(2);
    size_t c = (z * ny + y) * nx + x;
    float v = vol[c];
    float dz = z + 1 < nz ? vol[c + nx * ny] - v : 0.0f;
    float dy = y + 1 < ny ? vol[c + nx] - v : 0.0f;
    float dx = x + 1 < nx ? vol[c + 1] - v : 0.0f;
    out[c] = dx + 2.0f * dy + 3.0f * dz;
    ids[c] = (int)(get_group_id(2) * 10000 + get_local_id(2) * 1000 + get_local_id(1) * 100
                   + get_local_id(0) * 10 + get_work_dim());
}
