"""One step of a softened gravitational n-body simulation: each work-item sums the accelerations
on its body from all the others (a loop over every body, in the same order on every device),
updates its velocity and position (leapfrog), and reports its heading atan2(vy, vx) and the polar
angle acos(z / r) of its new position."""
import numpy as np

SIZES = {"small": {"n": 128}, "large": {"n": 512}}

KERNEL = """
__kernel void nbody_step(__global const float4 *pos, __global const float4 *vel,
                         __global float4 *pos_out, __global float4 *vel_out,
                         __global float *heading, __global float *polar, int n, float dt, float eps2)
{
    int i = get_global_id(0);
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float r2 = dx * dx + dy * dy + dz * dz + eps2;
        float inv = 1.0f / (r2 * sqrt(r2));
        float s = q.w * inv;
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    float4 v = vel[i];
    v.x += dt * ax;
    v.y += dt * ay;
    v.z += dt * az;
    p.x += dt * v.x;
    p.y += dt * v.y;
    p.z += dt * v.z;
    vel_out[i] = v;
    pos_out[i] = p;
    heading[i] = atan2(v.y, v.x);
    polar[i] = acos(p.z / sqrt(p.x * p.x + p.y * p.y + p.z * p.z));
}
"""

DT, EPS2 = 0.01, 0.01


def bodies(n):
    rng = np.random.default_rng(42)
    pos = np.zeros((n, 4), np.float32)
    pos[:, :3] = rng.uniform(-1, 1, (n, 3))
    pos[:, 2] *= 0.5                                       # keep z / r away from +-1, where acos is ill-conditioned
    pos[:, 3] = rng.uniform(0.5, 1.5, n) / n               # masses
    vel = np.zeros((n, 4), np.float32)
    vel[:, :3] = rng.uniform(-0.5, 0.5, (n, 3))
    return pos, vel


def run(cl, queue, n):
    ctx = queue.context
    pos_np, vel_np = bodies(n)
    pos = cl.array.to_device(queue, pos_np.ravel())
    vel = cl.array.to_device(queue, vel_np.ravel())
    pos_out, vel_out = cl.array.empty_like(pos), cl.array.empty_like(vel)
    heading = cl.array.empty(queue, n, np.float32)
    polar = cl.array.empty(queue, n, np.float32)
    prg = cl.Program(ctx, KERNEL).build()
    prg.nbody_step(queue, (n,), None, pos.data, vel.data, pos_out.data, vel_out.data, heading.data, polar.data,
                   np.int32(n), np.float32(DT), np.float32(EPS2))
    return {"pos": pos_out.get().reshape(n, 4), "vel": vel_out.get().reshape(n, 4), "heading": heading.get(),
            "polar": polar.get()}


def reference(n):
    pos, vel = (a.astype(np.float64) for a in bodies(n))
    d = pos[None, :, :3] - pos[:, None, :3]
    r2 = (d * d).sum(-1) + EPS2
    acc = (pos[None, :, 3, None] * d / (r2 * np.sqrt(r2))[..., None]).sum(1)
    v = vel.copy()
    v[:, :3] += DT * acc
    p = pos.copy()
    p[:, :3] += DT * v[:, :3]
    return {"pos": p, "vel": v, "heading": np.arctan2(v[:, 1], v[:, 0]),
            "polar": np.arccos(p[:, 2] / np.linalg.norm(p[:, :3], axis=1))}


def check(got, want, against):
    np.testing.assert_allclose(got["pos"], want["pos"], rtol=1e-6, atol=2e-6, err_msg=f"pos vs {against}")
    np.testing.assert_allclose(got["vel"], want["vel"], rtol=1e-5, atol=2e-6, err_msg=f"vel vs {against}")
    np.testing.assert_allclose(got["heading"], want["heading"], rtol=1e-5, atol=2e-5, err_msg=f"heading vs {against}")
    np.testing.assert_allclose(got["polar"], want["polar"], rtol=1e-5, atol=2e-5, err_msg=f"polar vs {against}")


if __name__ == "__main__":
    import sys
    from .harness import main
    main(sys.modules[__name__])
