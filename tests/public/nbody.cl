/* SHOC / AMD SDK n-body shape: float4 positions (w = mass) and velocities; each work-group
   stages a tile of bodies in __local memory, every work-item accumulates its body's acceleration
   from the tile with a softened inverse-square law (rsqrt), then steps velocity and position. */
__kernel void nbody_step(__global const float4 *pos, __global const float4 *vel,
                         __global float4 *new_pos, __global float4 *new_vel,
                         __local float4 *tile, int n, float dt, float soft2)
{
    int i = get_global_id(0);
    int lid = get_local_id(0);
    int wg = get_local_size(0);
    float4 me = pos[i];
    float4 acc = (float4)(0.0f);
    for (int base = 0; base < n; base += wg) {
        tile[lid] = pos[base + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < wg; k++) {
            float4 d = tile[k] - me;
            float r2 = d.x * d.x + d.y * d.y + d.z * d.z + soft2;
            float inv = rsqrt(r2);
            float s = tile[k].w * inv * inv * inv;
            acc.xyz += s * d.xyz;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float4 v = vel[i];
    v.xyz += acc.xyz * dt;
    me.xyz += v.xyz * dt;
    new_pos[i] = me;
    new_vel[i] = v;
}
