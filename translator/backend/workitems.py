"""Work-item values: each lane's position in the wave, and the global, local and group ids
and the __local block base made from it (once per wave or in the prologue)."""
from __future__ import annotations

from .abi import RGX_SLOT, ROW_LENGTH, reg
from .ops import SeqIf, VReg
from .values import MAX_GLOBAL_ID, Val


class WorkItems:
    """The work-item, local and group ids of each lane."""

    def __init__(self, em):
        self.em = em

    def wave_ids(self):
        """At the top of each wave: this lane's global position per dimension and whether it is live."""
        em = self.em
        sh = em.shape
        if em.rows is not None:
            return self.flat_ids()
        em.pos = []
        act = None
        for d, (s, o, g) in enumerate(((em.sx, em.X0, "gx"), (em.sy, em.Y0, "gy"), (em.sz, em.Z0, "gz"))):
            p = em.alu("iadd", o, s, hint=f"pos{d}")
            em.pos.append(p)
            if em.one_d and d:           # a 1-D launch: y and z are 0 in every lane of a full wave
                continue
            ok = em.bool_from_mask(em.flags("uimax", sh[g], em.alu("iinc", p)))   # gx >= p + 1
            act = ok if act is None else em.b_and(act, ok)
        em.active = act if em.in_wave is None else em.b_and(act, em.in_wave)
        em.ids_cache = {}

    def flat_ids(self):
        """A "rows" build (rows.py): the wave is W consecutive row-major positions f of a 2-D launch,
        gid1 = f div gx and gid0 = f - gid1 * gx; a lane is live while gid1 < gy.  Where gx is a
        power of two (the sequencer tests the launch's row length), a shift and a mask; otherwise
        through fp64 1 / gx, exactly (IntSel.div_exact), and a product."""
        em = self.em
        sh = em.shape
        f = em.alu("iadd", em.X0, em.sx, hint="flat")
        if "rgx" not in sh:
            sh["rgx"] = em.codegen.argval(RGX_SLOT, "rgx")      # (in the prologue)
            sh["lgx"], sh["mgx"] = self.row_shift(sh["rgx"], sh["gx"])
        y, x = em.new("gid1"), em.new("gid0")
        outer, em.items = em.items, []
        em.alu("uilsr", f, sh["lgx"], dst=y)
        em.alu("iand", f, sh["mgx"], dst=x)
        shifted, em.items = em.items, []
        q = em.ints.div_exact(f, sh["rgx"])
        em.copy(q, y)
        em.alu("isub", f, em.ints.mul32(q, sh["gx"]), dst=x)
        divided, em.items = em.items, outer
        em.uses["row_length"] = True
        n = reg(ROW_LENGTH)
        em.items.append(SeqIf(f"({n} & ({n} - 1)) == 0", shifted, divided))
        em.pos = [x, y, em.alu("iadd", em.Z0, em.sz)]
        act = em.bool_from_mask(em.flags("uimax", sh["gy"], em.alu("iinc", y)))     # gy >= gid1 + 1
        em.active = act if em.in_wave is None else em.b_and(act, em.in_wave)
        em.ids_cache = {}

    def row_shift(self, rgx: VReg, gx: VReg) -> tuple:
        """(log2 gx in both 32-bit halves, gx - 1), made in the prologue: for gx = 2^s the fp64
        1 / gx at rgx is (1023 - s) << 52 (a value the sequencer only uses when gx is a power of
        two)."""
        em = self.em
        outer, em.items = em.items, []
        e = em.alu("lsub", em.const64(1023), em.alu("ulsr", rgx, em.c32(52)))
        s = em.alu("lor", e, em.alu("llsl", e, em.c32(32)))
        m = em.alu("isub", gx, em.c32(1))
        em.prologue += em.items
        em.items = outer
        return s, m

    def ids_value(self, k: int) -> Val:
        """ids[k]: local ids (0..2), global ids (3..5), as 64-bit values with an exact 32-bit facet."""
        em = self.em
        if k in em.ids_cache:
            return em.ids_cache[k]
        sh = em.shape
        d = k % 3
        if k >= 3:
            n = em.alu("iadd", em.pos[d], sh[("offx", "offy", "offz")[d]])
            aff = (1, 0, None) if d == 0 and em.rows is None else None     # (rows: not the flat position)
        else:
            q = self.group_index(d)
            size = Val("i32", (sh[("lsx", "lsy", "lsz")[d]],))
            n = em.alu("isub", em.pos[d], em.ints.mul_general(Val("i32", (q,)), size, False).regs[0])
            aff = None
        hi, lo = em.split64(n, signed=False)
        v = Val("i64", (hi, lo), narrow=n, gid_affine=aff, rng=(0, MAX_GLOBAL_ID - 1))
        em.ids_cache[k] = v
        return v

    def group_index(self, d: int) -> VReg:
        """pos / ls in dimension d, for any local size."""
        em = self.em
        key = ("group", d)
        if key not in em.ids_cache:
            em.ids_cache[key] = em.ints.div_exact(em.pos[d], em.shape[("rlsx", "rlsy", "rlsz")[d]])
        return em.ids_cache[key]

    def local_base(self) -> VReg:
        """Byte offset of this lane's work-group block in the local scratch buffer: the group's
        index within the wave (the wave holds whole groups when the kernel uses __local) * lbytes;
        within its L2B's run of the wave when the build keeps the L2Bs' blocks apart (local_per_l2b),
        which a "groups" build knows from the slot (Codegen.group_positions)."""
        em = self.em
        if em.local_base_reg is None:
            saved, em.items = em.items, []
            sh = em.shape
            if em.group_major:
                lin = em.group_slot
            else:
                sx = em.alu("iand", em.sx, em.c32(em.lay.l2b_items - 1)) if em.local_l2b else em.sx
                g = [em.ints.div_exact(s_, sh[r]) for s_, r in ((sx, "rlsx"), (em.sy, "rlsy"), (em.sz, "rlsz"))]
                lin = em.alu("iadd", g[0], em.ints.mul32(sh["kx"], em.alu("iadd", g[1], em.ints.mul32(sh["ky"], g[2]))))
            em.local_base_reg = em.ints.mul32(lin, sh["lbytes"])
            em.prologue += em.items
            em.items = saved
        return em.local_base_reg

    def group_id(self, d: int) -> Val:
        em = self.em
        n = self.group_index(d)
        hi, lo = em.split64(n, signed=False)
        return Val("i64", (hi, lo), narrow=n, rng=(0, MAX_GLOBAL_ID - 1))
