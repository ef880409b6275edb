#!/usr/bin/env python3
"""Random VMM case files, for comparing the mock with a real driver on sequences nobody
wrote by hand.

    ci/random-cases.py OUTDIR [--seed N] [--cases N] [--steps N]

writes OUTDIR/random-<seed>-<i>.case: each a random sequence of reservations, physical
allocations, maps and unmaps (aligned or not, overlapping or not, inside, across and past
the reservations), access grants, copies, memsets, reads after writes (through aliases
too), releases, retains, exports and imports, pointer attributes and address ranges.
The same seed always writes the same files. Record them on a GPU and on the mock, then
compare step by step:

    cumock record --out DRV OUTDIR                                  # on the GPU runner
    cumock record --out MOCK --driver target/release/libcuda.so OUTDIR
    cumock diff MOCK/<set> DRV/<set>

Every step goes through the driver's API with addresses the case reserved or the driver
handed out, never a host pointer of its own: a real driver is safe to run them
(`host-touch` and unified copies are never generated). Sizes stay small (at most 64
granules a reservation, 8 an allocation), so a case holds at most a few hundred MiB.
Reads after a write compare the written bytes (`data=ok` or where they differ); reads of
memory no step of the case wrote skip the comparison (`data=skip`): its bytes are the
driver's business.

A `synchronize` comes before every unmap and every access downgrade (a grant of `r` or
`none` to device 0) of a reservation that a write, memset or copy issued since the last
`synchronize` (or `stream-sync` of its stream) may still be using, as the hand-written
cases do. Without it the step races work still in flight (cuMemcpyHtoD from pageable
memory returns before the data lands; memsets and device copies do not wait either): on
the H200 the work then faulted in some runs and not in others (42 of the 147 random cases
that raced ended in a sticky CUDA_ERROR_LAUNCH_FAILED or ILLEGAL_ADDRESS:
docs/findings-h200-580.159.04.md), so such a case compared the race's outcome, not the
driver's rules. A read (cuMemcpyDtoH) would synchronise too, but only when it is not
refused, which the generator cannot know; so reads count for nothing here. The check is
by reservation, wider than the mapping the work went through: the generator's idea of
what is mapped is only a guess. The synchronize steps draw nothing from the random
generator, so a seed writes the same steps as before with them added.
"""
import argparse
import os
import random
import re


def downgrades(grant):
    """Whether set-access's `grant=` text (one grant, or two joined by ` grant=`) takes
    device 0's access down: to read-only or none."""
    return any(g in ("0:r", "0:none") for g in grant.replace(" grant=", " ").split())


class Case:
    def __init__(self, rng: random.Random, steps: int):
        self.rng = rng
        self.steps = steps
        self.lines = []
        self.n = 0
        # name -> size in granules
        self.reservations = {}
        self.allocations = {}
        self.fds = []
        self.streams = []
        self.allocs = []
        self.seeds = {}  # address expression -> (seed, len) written there
        # The generator's guess of what is mapped (reservation -> granule -> handle) and
        # granted, to steer most steps at memory that works: a guess only, since steps
        # may fail; the transcripts say what happened.
        self.slots = {}
        self.granted = {}
        # Allocations made to be exported: a failed export binds fd 0, and importing or
        # closing stdin would make the case depend on what runs it.
        self.exportable = set()
        # Work that may still be in flight: stream (None: the legacy stream's synchronous
        # calls) -> the reservations its writes, memsets and copies went to since that
        # stream was last synchronised.
        self.in_flight = {}

    def fresh(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def emit(self, line):
        self.lines.append(line)

    # Work in flight -----------------------------------------------------------------
    @staticmethod
    def reservation_of(addr):
        """The reservation an address expression lies in, if it names one."""
        m = re.match(r"(va\d+)\b", addr)
        return m.group(1) if m else None

    def issue(self, addr, stream=None):
        """A write, memset or copy at `addr` that may still run after its call returns."""
        name = self.reservation_of(addr)
        if name:
            self.in_flight.setdefault(stream, set()).add(name)

    def settle(self, addr):
        """Synchronises before an unmap or access downgrade at `addr` if work may still
        use its reservation."""
        name = self.reservation_of(addr)
        if name and any(name in names for names in self.in_flight.values()):
            self.synchronize()

    # Expressions --------------------------------------------------------------------
    def granules(self, most):
        """A size (its expression) and the granules it may touch, at most `most`."""
        r = self.rng.random()
        if r < 0.06:
            return "0", 1
        if r < 0.12:
            return "4096", 1
        if r < 0.16:
            return "g+4096", 2
        k = self.rng.randint(1, most)
        return ("g" if k == 1 else f"{k}g"), k

    def address(self, span=1):
        """An address in a reservation from which `span` granules (plus the offset's)
        stay inside it. Never past a reservation's end: what lies there is wherever the
        driver put the next reservation, which differs from run to run (on the mock as
        on a GPU), so such a step would compare layouts, not rules."""
        r = self.rng.random()
        offset = "+4096" if r < 0.08 else ("+100" if r < 0.12 else "")
        need = span + (1 if offset else 0)
        fits = [n for n, size in self.reservations.items() if size >= need]
        if not fits or self.rng.random() < 0.03:
            return self.rng.choice(["0", "4096", "g"])
        name = self.rng.choice(fits)
        k = self.rng.randint(0, self.reservations[name] - need)
        return self.at(name, k) + offset

    def handle(self):
        if not self.allocations or self.rng.random() < 0.03:
            return "0"
        return self.rng.choice(list(self.allocations))

    # Steps --------------------------------------------------------------------------
    def reserve(self):
        if len(self.reservations) >= 8:
            return self.address_free()
        name = self.fresh("va")
        k = self.rng.choice([1, 2, 3, 4, 4, 8, 8, 16, 32, 64])
        extra = ""
        r = self.rng.random()
        if r < 0.15:
            extra = " align=" + self.rng.choice(["g", "2g", "4096", "3g", "64g", "4g"])
        elif r < 0.2 and self.reservations:
            other = self.rng.choice(list(self.reservations))
            extra = f" hint={other}+{self.rng.randint(0, 4)}g"
        size = f"{k}g" if self.rng.random() > 0.05 else f"{k}g+4096"
        self.emit(f"{name} = reserve {size}{extra}")
        self.reservations[name] = k
        self.slots[name] = [None] * k
        self.granted[name] = [False] * k

    def address_free(self):
        if not self.reservations:
            return self.reserve()
        name = self.rng.choice(list(self.reservations))
        size = self.reservations[name]
        r = self.rng.random()
        if r < 0.8:
            self.emit(f"address-free {name} {size}g")
            del self.reservations[name]
            del self.slots[name], self.granted[name]
            self.seeds = {a: v for a, v in self.seeds.items() if not a.startswith(name)}
        elif r < 0.9:
            self.emit(f"address-free {name} {max(size - 1, 0)}g")
        else:
            self.emit(f"address-free {name}+g {size}g")

    def create(self):
        if len(self.allocations) >= 10:
            return self.release()
        name = self.fresh("h")
        k = self.rng.choice([1, 1, 2, 2, 3, 4, 8])
        size = f"{k}g" if self.rng.random() > 0.07 else self.rng.choice(["4096", "0", "g+4096"])
        extra = ""
        if self.rng.random() < 0.3:
            extra += " handle-types=fd"
            self.exportable.add(name)
        if self.rng.random() < 0.04:
            extra += " device=" + self.rng.choice(["1", "7", "-1"])
        elif self.rng.random() < 0.1:
            extra += " location=host"
        self.emit(f"{name} = create {size}{extra}")
        self.allocations[name] = k

    def release(self):
        if not self.allocations:
            return self.create()
        name = self.rng.choice(list(self.allocations))
        self.emit(f"release {name}")
        if self.rng.random() < 0.85:
            del self.allocations[name]

    def at(self, name, k):
        return name if k == 0 else (f"{name}+g" if k == 1 else f"{name}+{k}g")

    def free_run(self, n):
        """A reservation and granule where `n` granules are unmapped, if any."""
        runs = []
        for name, slots in self.slots.items():
            for k in range(len(slots) - n + 1):
                if all(s is None for s in slots[k : k + n]):
                    runs.append((name, k))
        return self.rng.choice(runs) if runs else None

    def map_fitting(self):
        """Maps a whole allocation where nothing is mapped, and mostly grants it."""
        if not self.allocations:
            return self.create()
        h = self.rng.choice(list(self.allocations))
        n = self.allocations[h]
        run = self.free_run(n)
        if run is None:
            return self.reserve()
        name, k = run
        size = "g" if n == 1 else f"{n}g"
        self.emit(f"map {self.at(name, k)} size={size} handle={h}")
        for i in range(k, k + n):
            self.slots[name][i] = h
        if self.rng.random() < 0.8:
            grant = f"0:{self.rng.choice(['rw', 'rw', 'rw', 'r'])}"
            # The map may have failed (the generator's guess), leaving the grant to a
            # mapping that was there, with work in flight.
            if downgrades(grant):
                self.settle(name)
            self.emit(f"set-access {self.at(name, k)} {size} grant={grant}")
            for i in range(k, k + n):
                self.granted[name][i] = True

    def mapped_address(self, whole=False):
        """An address the generator believes mapped and granted, else any, from which
        1 MiB (a granule when `whole`) stays inside its reservation."""
        live = [(n, k) for n, g in self.granted.items() for k, ok in enumerate(g) if ok]
        if not live or self.rng.random() < 0.25:
            return self.address(1 if not whole else 2)
        name, k = self.rng.choice(live)
        last = k + 1 == self.reservations[name]
        if whole:
            offs = [""] if last else ["", "", "+4096"]
        else:
            offs = ["", "", "+4096", "+100"] + ([] if last else ["+g-64"])
        return self.at(name, k) + self.rng.choice(offs)

    def unmap_mapped(self):
        """Unmaps one whole mapping the generator believes there."""
        starts = []
        for name, slots in self.slots.items():
            k = 0
            while k < len(slots):
                if slots[k] is None:
                    k += 1
                    continue
                j = k
                while j < len(slots) and slots[j] == slots[k]:
                    j += 1
                starts.append((name, k, j - k))
                k = j
        if not starts:
            return self.unmap()
        name, k, n = self.rng.choice(starts)
        self.settle(name)
        self.emit(f"unmap {self.at(name, k)} {'g' if n == 1 else f'{n}g'}")
        for i in range(k, k + n):
            self.slots[name][i] = None
            self.granted[name][i] = False

    def map(self):
        h = self.handle()
        k = self.allocations.get(h, 1)
        r = self.rng.random()
        if r < 0.7:
            size, span = (f"{k}g" if k > 1 else "g"), k
        else:
            size, span = self.granules(k + 1)
        extra = ""
        if self.rng.random() < 0.1:
            extra = " offset=" + self.rng.choice(["g", "4096", f"{k}g"])
        if self.rng.random() < 0.03:
            extra += " flags=1"
        self.emit(f"map {self.address(span)} size={size} handle={h}{extra}")

    def unmap(self):
        size, span = self.granules(8)
        addr = self.address(span)
        self.settle(addr)
        self.emit(f"unmap {addr} {size}")

    def set_access(self):
        grant = self.rng.choice(["0:rw", "0:rw", "0:rw", "0:r", "0:none", "host:rw", "1:rw"])
        if self.rng.random() < 0.1:
            grant += " grant=" + self.rng.choice(["0:r", "0:rw"])
        size, span = self.granules(8)
        addr = self.address(span)
        if downgrades(grant):
            self.settle(addr)
        self.emit(f"set-access {addr} {size} grant={grant}")

    def get_access(self):
        self.emit(f"get-access {self.mapped_address()}")

    def write(self):
        addr = self.mapped_address()
        length = self.rng.choice([1, 64, 4096, 65536, 1 << 20])
        seed = self.rng.randint(1, 1000)
        stream = ""
        if self.streams and self.rng.random() < 0.2:
            stream = f" stream={self.rng.choice(self.streams)}"
        self.emit(f"write {addr} len={length} seed={seed}{stream}")
        self.issue(addr, stream[len(" stream="):] or None)
        self.seeds[addr] = (seed, length)

    def read(self):
        if self.seeds and self.rng.random() < 0.7:
            addr, (seed, length) = self.rng.choice(list(self.seeds.items()))
            self.emit(f"read {addr} len={length} seed={seed}")
        else:
            self.emit(f"read {self.address()} len={self.rng.choice([4, 4096])} seed=1 data=skip")

    def memset(self):
        width = self.rng.choice(["", " width=16", " width=32"])
        count = self.rng.choice(["1", "256", "4096", "g"])
        addr = self.mapped_address(whole=count == "g")
        self.emit(f"memset {addr} {count} 0x5a{width}")
        self.issue(addr)
        # What was written there is no longer the seed's.
        self.seeds = {}

    def copy(self):
        n = self.rng.choice(["64", "4096", "g"])
        whole = n == "g"
        dst, src = self.mapped_address(whole), self.mapped_address(whole)
        self.emit(f"copy {dst} {src} {n}")
        self.issue(dst)
        self.issue(src)
        self.seeds = {}

    def retain(self):
        name = self.fresh("rh")
        self.emit(f"{name} = retain {self.mapped_address()}")
        if self.rng.random() < 0.8:
            self.emit(f"release {name}")

    def props(self):
        self.emit(f"props {self.handle()}")

    def export(self):
        live = [h for h in self.allocations if h in self.exportable]
        if not live:
            return self.props()
        h = self.rng.choice(live)
        name = self.fresh("fd")
        self.emit(f"{name} = export {h}")
        self.fds.append(name)
        if self.rng.random() < 0.7:
            imp = self.fresh("ih")
            self.emit(f"{imp} = import {name}")
            self.allocations[imp] = self.allocations.get(h, 1)
            self.exportable.add(imp)

    def close(self):
        if not self.fds:
            return self.export()
        fd = self.fds.pop(self.rng.randrange(len(self.fds)))
        self.emit(f"close {fd}")

    def attribute(self):
        name = self.rng.choice(
            ["MEMORY_TYPE", "DEVICE_ORDINAL", "RANGE_SIZE", "MAPPED", "IS_LEGACY_CUDA_IPC_CAPABLE",
             "ACCESS_FLAGS", "ALLOWED_HANDLE_TYPES", "SYNC_MEMOPS"]
        )
        self.emit(f"pointer-attribute {name} {self.mapped_address()}")

    def range(self):
        self.emit(f"range {self.mapped_address()}")

    def alloc(self):
        """cuMemAlloc memory beside the VMM's: copies between the two, attributes."""
        if len(self.allocs) >= 3:
            name = self.allocs.pop(self.rng.randrange(len(self.allocs)))
            self.emit(f"mem-free {name}")
            return
        name = self.fresh("p")
        self.emit(f"{name} = alloc {self.rng.choice(['4096', 'g', '3g', '100'])}")
        self.allocs.append(name)
        if self.rng.random() < 0.5:
            addr = self.mapped_address()
            self.emit(f"copy {name} {addr} 64")
        else:
            addr = self.mapped_address()
            self.emit(f"copy {addr} {name} 64")
        self.issue(addr)

    def stream(self):
        if len(self.streams) < 2:
            name = self.fresh("s")
            self.emit(f"{name} = stream-create")
            self.streams.append(name)
        else:
            name = self.rng.choice(self.streams)
            self.emit(f"stream-sync {name}")
            self.in_flight.pop(name, None)

    def synchronize(self):
        self.emit("synchronize")
        self.in_flight.clear()

    def build(self):
        self.emit("init")
        self.emit("ctx = primary-retain 0")
        self.emit("set-current ctx")
        self.emit("g = granularity min device=0")
        for _ in range(2):
            self.reserve()
        self.create()
        ops = [
            (self.reserve, 6), (self.address_free, 3), (self.create, 7), (self.release, 4),
            (self.map, 5), (self.map_fitting, 12), (self.unmap, 3), (self.unmap_mapped, 5), (self.set_access, 10), (self.get_access, 3),
            (self.write, 8), (self.read, 8), (self.memset, 3), (self.copy, 3),
            (self.retain, 3), (self.props, 2), (self.export, 2), (self.close, 1),
            (self.attribute, 3), (self.range, 3), (self.stream, 1), (self.synchronize, 1), (self.alloc, 2),
        ]
        funcs = [f for f, w in ops for _ in range(w)]
        for _ in range(self.steps):
            self.rng.choice(funcs)()
        self.emit("synchronize")
        for fd in self.fds:
            self.emit(f"close {fd}")
        return self.lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cases", type=int, default=20)
    p.add_argument("--steps", type=int, default=60)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.cases):
        rng = random.Random(a.seed * 100003 + i)
        lines = Case(rng, a.steps).build()
        with open(os.path.join(a.out, f"random-{a.seed}-{i:03}.case"), "w") as f:
            f.write(f"# Random VMM sequence (ci/random-cases.py --seed {a.seed}, case {i}).\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
