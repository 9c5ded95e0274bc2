"""Work-item values: each lane's position in the wave, and the global, local and group ids
and the __local block base made from it (once per wave or in the prologue)."""
from __future__ import annotations

from .ops import VReg
from .values import MAX_GLOBAL_ID, Val


class WorkItems:
    """The work-item, local and group ids of each lane."""

    def __init__(self, em):
        self.em = em

    def wave_ids(self):
        """At the top of each wave: this lane's global position per dimension and whether it is live."""
        sh = self.em.shape
        self.em.pos = []
        act = None
        for d, (s, o, g) in enumerate(((self.em.sx, self.em.X0, "gx"), (self.em.sy, self.em.Y0, "gy"), (self.em.sz, self.em.Z0, "gz"))):
            p = self.em.alu("iadd", o, s, hint=f"pos{d}")
            self.em.pos.append(p)
            if self.em.one_d and d:           # a 1-D launch: y and z are 0 in every lane of a full wave
                continue
            ok = self.em.bool_from_mask(self.em.flags("uimax", sh[g], self.em.alu("iinc", p)))   # gx >= p + 1
            act = ok if act is None else self.em.b_and(act, ok)
        self.em.active = act if self.em.in_wave is None else self.em.b_and(act, self.em.in_wave)
        self.em.ids_cache = {}

    def ids_value(self, k: int) -> Val:
        """ids[k]: local ids (0..2), global ids (3..5), as 64-bit values with an exact 32-bit facet."""
        if k in self.em.ids_cache:
            return self.em.ids_cache[k]
        sh = self.em.shape
        d = k % 3
        if k >= 3:
            n = self.em.alu("iadd", self.em.pos[d], sh[("offx", "offy", "offz")[d]])
            aff = (1, 0, None) if d == 0 else None
        else:
            q = self.group_index(d)
            n = self.em.alu("isub", self.em.pos[d], self.em.ints.mul_general(Val("i32", (q,)), Val("i32", (sh[("lsx", "lsy", "lsz")[d]],)), False).regs[0])
            aff = None
        hi, lo = self.em.split64(n, signed=False)
        v = Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=(0, MAX_GLOBAL_ID - 1))
        self.em.ids_cache[k] = v
        return v

    def group_index(self, d: int) -> VReg:
        """pos / ls in dimension d, for any local size."""
        key = ("group", d)
        if key not in self.em.ids_cache:
            self.em.ids_cache[key] = self.em.ints.div_exact(self.em.pos[d], self.em.shape[("rlsx", "rlsy", "rlsz")[d]])
        return self.em.ids_cache[key]

    def local_base(self) -> VReg:
        """Byte offset of this lane's work-group block in the local scratch buffer: the group's
        index within the wave (the wave holds whole groups when the kernel uses __local) * lbytes."""
        if self.em.local_base_reg is None:
            saved, self.em.items = self.em.items, []
            sh = self.em.shape
            g = [self.em.ints.div_exact(s_, sh[r]) for s_, r in ((self.em.sx, "rlsx"), (self.em.sy, "rlsy"), (self.em.sz, "rlsz"))]
            lin = self.em.alu("iadd", g[0], self.em.ints.mul32(sh["kx"], self.em.alu("iadd", g[1], self.em.ints.mul32(sh["ky"], g[2]))))
            self.em.local_base_reg = self.em.ints.mul32(lin, sh["lbytes"])
            self.em.prologue += self.em.items
            self.em.items = saved
        return self.em.local_base_reg

    def group_id(self, d: int) -> Val:
        n = self.group_index(d)
        hi, lo = self.em.split64(n, signed=False)
        return Val("i64", (hi, lo), narrow=n, rng=(0, MAX_GLOBAL_ID - 1))
