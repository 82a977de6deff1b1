// A set of content hashes that only tells whether a hash is new: it keeps a 64-bit prefix of each
// in a flat open-addressing table (8 bytes a slot), so counting a million distinct contents costs
// ~16 MB instead of ~100 MB of hash strings. Prefixes of SHA-256 are uniform, so two distinct
// hashes sharing one are as unlikely as a 64-bit collision (1 in ~3·10^7 among 10^6 hashes).

const MAX_LOAD = 0.7;

export class HashCounter {
  private hi = new Uint32Array(1 << 12);
  private lo = new Uint32Array(1 << 12);
  private used = 0;

  /** Distinct hashes added. */
  get size(): number {
    return this.used;
  }

  /** Adds a hex hash (at least 16 hex digits); true when it was not there yet. */
  add(hash: string): boolean {
    const hi = Number.parseInt(hash.slice(0, 8), 16) >>> 0;
    // 0/0 marks an empty slot: a hash whose prefix is all zeros is kept as 0/1.
    const lo = Number.parseInt(hash.slice(8, 16), 16) >>> 0 || (hi === 0 ? 1 : 0);
    if (!this.insert(hi, lo)) return false;
    if (++this.used > this.lo.length * MAX_LOAD) this.grow();
    return true;
  }

  private insert(hi: number, lo: number): boolean {
    const mask = this.lo.length - 1;
    for (let i = lo & mask; ; i = (i + 1) & mask) {
      const h = this.hi[i] as number;
      const l = this.lo[i] as number;
      if (h === 0 && l === 0) {
        this.hi[i] = hi;
        this.lo[i] = lo;
        return true;
      }
      if (h === hi && l === lo) return false;
    }
  }

  private grow(): void {
    const { hi, lo } = this;
    this.hi = new Uint32Array(hi.length * 2);
    this.lo = new Uint32Array(lo.length * 2);
    for (let i = 0; i < lo.length; i++) {
      if (hi[i] !== 0 || lo[i] !== 0) this.insert(hi[i] as number, lo[i] as number);
    }
  }
}
