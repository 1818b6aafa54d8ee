//! A stand-in, for the local chain only, of Jupiter's aggregator program: a hand-assembled sBPF
//! program that does what `shared_accounts_route_v2` does to token balances, against one pool
//! that the program's own authority holds. Deployed at Jupiter's program id
//! (`JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4`) it lets tests send the transactions our swap
//! code builds for Jupiter and see real SPL Token balances move. It is not Jupiter: no route
//! plan is followed, no fee is taken, no event is emitted.
//!
//! What it does with an instruction (accounts by position, as Jupiter's):
//!
//! 1. Refuses with custom error [`ERROR_NOT_ROUTE`] (101, Anchor's `InstructionFallbackNotFound`)
//!    fewer than 12 accounts, data shorter than 31 bytes, another discriminator, or an `id`
//!    (data byte 8) other than the one the ELF was built for.
//! 2. CPI to account 8 (SPL Token): `Transfer` of `in_amount` (data @9) from account 2 (user
//!    source) to account 3 (program source), authority account 1 (the user, who signed).
//! 3. `out = min(quoted_out_amount (@17), pool)` where the pool is account 4's token amount
//!    (u64 at data offset 64); `threshold = floor(quoted × (10000 − slippage_bps (@25)) / 10000)`
//!    (computed overflow-free as `q/10000·m + (q%10000)·m/10000`, `m` = 0 when the slippage is
//!    over 10000). `out < threshold` → custom error [`ERROR_SLIPPAGE`] (6001, Jupiter's
//!    `SlippageToleranceExceeded`); the failed transaction reverts the first transfer.
//! 4. CPI to account 9 (SPL Token): `Transfer` of `out` from account 4 to account 5 (user
//!    destination), authority account 0, signed with the seeds `["authority", [id], [bump]]`.
//! 5. `sol_set_return_data(out as u64 LE)`, as Jupiter returns the out amount; then 0.
//!
//! Accounts may repeat (8 and 9 are usually the same token program): the program walks the
//! serialized input and, for a duplicate, takes the address of the account it repeats. Account
//! 0 is not compared with the PDA (the second transfer fails unless it is the PDA, whose
//! signature alone is given), and account 4 must be a token account (72 bytes of data or more).
//!
//! The input (loader v2/v3, "aligned"): u64 number of accounts; per account either a duplicate
//! (u8 index of the original, 7 bytes padding) or `0xff`, is_signer, is_writable, executable,
//! 4 bytes padding, key @8, owner @40, lamports @72, data_len @80, data @88, then 10240 bytes of
//! realloc room, padding to 8 and the u64 rent epoch; then u64 data length, the data, and the
//! program id. The CPI structs (`SolInstruction`, `SolAccountMeta`, `SolAccountInfo`,
//! `SolSignerSeeds`) are built on the stack, below the input region as the runtime requires,
//! with each account info's key, lamports, data and owner pointers at that account's serialized
//! fields (the runtime checks them).
//!
//! The ELF (sBPF v0, `e_flags` 0, ET_DYN, EM_BPF, no program headers) holds, in this order:
//! `.text` (loaded where it lies: `sh_addr` = file offset), `.dynsym` (the null symbol and one
//! undefined global per syscall), `.dynstr` (their names), `.rel.dyn` (one `R_BPF_64_32` per
//! `call`, whose immediate is -1), `.dynamic` (`DT_REL`, `DT_RELSZ`, `DT_RELENT`, `DT_SYMTAB`)
//! and `.shstrtab`. The loader (solana-sbpf's lenient parser for v0) finds `.dynamic` by its
//! section type when there is no `PT_DYNAMIC`, the relocation and symbol tables as the sections
//! whose `sh_addr` equals `DT_REL` and `DT_SYMTAB`, and `.dynstr` by its name; it writes the
//! murmur3 hash of each symbol's name into its call, which is how a v0 program reaches a
//! syscall (a `call` whose immediate is not -1 is taken as a relative call inside the program).

use std::collections::HashMap;

use shared::address::{Address, find_program_address};
use shared::solana::jupiter::RouteKind;

/// Custom error of an instruction this program does not take (Anchor's
/// `InstructionFallbackNotFound`): too few accounts, short data, another discriminator or `id`.
pub const ERROR_NOT_ROUTE: u32 = 101;
/// Custom error when the pool cannot pay the quote within the slippage (Jupiter's
/// `SlippageToleranceExceeded`).
pub const ERROR_SLIPPAGE: u32 = 6001;

/// The program authority (account 0) of `id` under `program_id`, and its bump.
pub fn program_authority(program_id: &Address, id: u8) -> (Address, u8) {
    find_program_address(&[b"authority", &[id]], program_id).expect("a bump off the curve")
}

// Registers. r1–r5 carry call arguments (clobbered by syscalls), r6–r9 survive them, r10 is
// the frame pointer (read-only).
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R10: u8 = 10;

// The stack, as offsets from r10 (a v0 frame is 4 KiB below r10).
/// 12 × u64: the address of accounts 0..11's serialized record (a duplicate's original).
const ACCOUNTS: i16 = -512;
/// SolInstruction: program_id*, accounts*, account_len, data*, data_len.
const IX: i16 = ACCOUNTS + 96;
/// 3 × SolAccountMeta: pubkey*, is_writable u8, is_signer u8 (16 bytes each).
const METAS: i16 = IX + 40;
/// 3 × SolAccountInfo: key*, lamports*, data_len, data*, owner*, rent_epoch, is_signer,
/// is_writable, executable (56 bytes each).
const INFOS: i16 = METAS + 48;
/// The SPL Token `Transfer` data: 3, then the amount u64 LE (9 bytes).
const TRANSFER: i16 = INFOS + 3 * 56;
/// The seed bytes: "authority", id, bump (11 bytes).
const SEED_BYTES: i16 = TRANSFER + 16;
/// 3 × SolSignerSeed: addr*, len.
const SEEDS: i16 = SEED_BYTES + 16;
/// SolSignerSeeds: addr*, len (one signer).
const SIGNER: i16 = SEEDS + 48;

// A serialized account record.
const KEY: i16 = 8;
const OWNER: i16 = 40;
const LAMPORTS: i16 = 72;
const DATA_LEN: i16 = 80;
const DATA: i16 = 88;
/// Header (88) + realloc room (10240) + 7: with data_len added, `& -8` rounds up to 8.
const RECORD_FIXED: i32 = 88 + 10240 + 7;

// The instruction data, as offsets from the u64 data length before it.
const IX_LEN: i16 = 0;
const IX_DISCRIMINATOR: i16 = 8;
const IX_ID: i16 = 8 + 8;
const IX_IN_AMOUNT: i16 = 8 + 9;
const IX_QUOTED_OUT: i16 = 8 + 17;
const IX_SLIPPAGE: i16 = 8 + 25;

/// SPL Token account layout: the amount.
const TOKEN_AMOUNT: i16 = 64;

/// The ELF of the stand-in for `shared_accounts_route_v2` at `program_id`, taking instructions
/// whose `id` is `id` (its authority is the PDA `["authority", [id]]`).
pub fn route_program_elf(program_id: &Address, id: u8) -> Vec<u8> {
    let (_, bump) = program_authority(program_id, id);
    let mut a = Asm::default();

    // Walk the accounts: r6 = cursor, r7 = index, r8 = count.
    a.ldxdw(R8, R1, 0); // r8 = number of accounts
    a.jlt_imm(R8, 12, "refuse"); // fewer than 12 accounts
    a.mov64_reg(R6, R1);
    a.add64_imm(R6, 8); // r6 = first record
    a.mov64_imm(R7, 0); // r7 = 0
    a.label("walk");
    a.jge_reg(R7, R8, "walked"); // every account seen
    a.ldxb(R2, R6, 0); // r2 = duplicate marker
    a.jne_imm(R2, 0xff, "duplicate");
    a.mov64_reg(R3, R6); // r3 = this record
    a.ldxdw(R4, R6, DATA_LEN);
    a.add64_reg(R6, R4); // skip data,
    a.add64_imm(R6, RECORD_FIXED); // header and realloc room,
    a.and64_imm(R6, -8); // aligned to 8,
    a.add64_imm(R6, 8); // and the rent epoch
    a.ja("record");
    a.label("duplicate");
    a.add64_imm(R6, 8); // a duplicate is 8 bytes
    a.jge_imm(R2, 12, "next"); // the original is not one of ours (nor then is this one)
    a.lsh64_imm(R2, 3);
    a.add64_reg(R2, R10);
    a.ldxdw(R3, R2, ACCOUNTS); // r3 = the original's record
    a.label("record");
    a.jge_imm(R7, 12, "next"); // only accounts 0..11 are kept
    a.mov64_reg(R2, R7);
    a.lsh64_imm(R2, 3);
    a.add64_reg(R2, R10);
    a.stxdw(R2, ACCOUNTS, R3); // ACCOUNTS[r7] = r3
    a.label("next");
    a.add64_imm(R7, 1);
    a.ja("walk");

    // r6 = the instruction data length, then the data.
    a.label("walked");
    a.ldxdw(R2, R6, IX_LEN);
    a.jlt_imm(R2, 31, "refuse"); // shorter than the fixed arguments
    a.ldxdw(R2, R6, IX_DISCRIMINATOR);
    a.lddw(R3, u64::from_le_bytes(RouteKind::SharedAccountsRouteV2.discriminator()));
    a.jne_reg(R2, R3, "refuse"); // another instruction
    a.ldxb(R2, R6, IX_ID);
    a.jne_imm(R2, i32::from(id), "refuse"); // another id (authority)

    // CPI 1: Transfer in_amount from 2 to 3, authority 1 (the user's signature carries over).
    a.ldxdw(R2, R6, IX_IN_AMOUNT);
    transfer_cpi(&mut a, R2, [(2, false), (3, false), (1, true)], 8);
    a.mov64_imm(R4, 0); // no signer seeds
    a.mov64_imm(R5, 0);
    a.call_syscall("sol_invoke_signed_c");

    // The pool and the slippage check: r7 = quoted, r8 = out, r4 = threshold.
    a.ldxdw(R3, R10, ACCOUNTS + 4 * 8);
    a.ldxdw(R2, R3, DATA + TOKEN_AMOUNT); // r2 = account 4's token amount
    a.ldxdw(R7, R6, IX_QUOTED_OUT);
    a.mov64_reg(R8, R7); // out = quoted
    a.jle_reg(R7, R2, "capped");
    a.mov64_reg(R8, R2); // out = pool, when smaller
    a.label("capped");
    a.ldxh(R2, R6, IX_SLIPPAGE);
    a.mov64_imm(R3, 0); // m = 0 when slippage > 10000
    a.jgt_imm(R2, 10_000, "factor");
    a.mov64_imm(R3, 10_000);
    a.sub64_reg(R3, R2); // m = 10000 - slippage
    a.label("factor");
    a.mov64_reg(R4, R7);
    a.div64_imm(R4, 10_000);
    a.mul64_reg(R4, R3); // (q / 10000) · m
    a.mov64_reg(R5, R7);
    a.mod64_imm(R5, 10_000);
    a.mul64_reg(R5, R3);
    a.div64_imm(R5, 10_000); // (q % 10000) · m / 10000
    a.add64_reg(R4, R5); // threshold
    a.jge_reg(R8, R4, "within");
    a.mov64_imm(R0, ERROR_SLIPPAGE as i32);
    a.exit();

    // CPI 2: Transfer out from 4 to 5, authority 0, signed by ["authority", [id], [bump]].
    a.label("within");
    a.stw(R10, SEED_BYTES, i32::from_le_bytes(*b"auth"));
    a.stw(R10, SEED_BYTES + 4, i32::from_le_bytes(*b"orit"));
    a.stb(R10, SEED_BYTES + 8, b'y');
    a.stb(R10, SEED_BYTES + 9, id);
    a.stb(R10, SEED_BYTES + 10, bump);
    for (i, (at, len)) in [(0, 9), (9, 1), (10, 1)].into_iter().enumerate() {
        let seed = SEEDS + 16 * i as i16;
        a.mov64_reg(R2, R10);
        a.add64_imm(R2, i32::from(SEED_BYTES + at));
        a.stxdw(R10, seed, R2); // seed i: addr
        a.stdw(R10, seed + 8, len); // seed i: len
    }
    a.mov64_reg(R2, R10);
    a.add64_imm(R2, i32::from(SEEDS));
    a.stxdw(R10, SIGNER, R2); // signer: its seeds
    a.stdw(R10, SIGNER + 8, 3); // three of them
    transfer_cpi(&mut a, R8, [(4, false), (5, false), (0, true)], 9);
    a.mov64_reg(R4, R10);
    a.add64_imm(R4, i32::from(SIGNER));
    a.mov64_imm(R5, 1); // one signer
    a.call_syscall("sol_invoke_signed_c");

    // Return data: out, as the transfer data holds it.
    a.mov64_reg(R1, R10);
    a.add64_imm(R1, i32::from(TRANSFER + 1));
    a.mov64_imm(R2, 8);
    a.call_syscall("sol_set_return_data");
    a.mov64_imm(R0, 0);
    a.exit();

    a.label("refuse");
    a.mov64_imm(R0, ERROR_NOT_ROUTE as i32);
    a.exit();

    let (code, calls) = a.finish();
    elf(&code, &calls)
}

/// Sets r1–r3 for `sol_invoke_signed_c` of an SPL Token `Transfer` of the amount in `amount`
/// with `accounts` (index, is_signer; the first two writable) to the program at account
/// `program`, building its structs on the stack. Leaves r4 and r5 (the signers) to the caller.
fn transfer_cpi(a: &mut Asm, amount: u8, accounts: [(i16, bool); 3], program: i16) {
    a.stb(R10, TRANSFER, 3); // Transfer
    a.stxdw(R10, TRANSFER + 1, amount); // amount, u64 LE
    for (i, (account, is_signer)) in accounts.into_iter().enumerate() {
        let (meta, info) = (METAS + 16 * i as i16, INFOS + 56 * i as i16);
        a.ldxdw(R3, R10, ACCOUNTS + 8 * account); // r3 = the account's record
        a.mov64_reg(R4, R3);
        a.add64_imm(R4, i32::from(KEY));
        a.stxdw(R10, meta, R4); // meta.pubkey
        a.stxdw(R10, info, R4); // info.key
        a.stb(R10, meta + 8, u8::from(i < 2)); // meta.is_writable
        a.stb(R10, meta + 9, u8::from(is_signer)); // meta.is_signer
        a.mov64_reg(R4, R3);
        a.add64_imm(R4, i32::from(LAMPORTS));
        a.stxdw(R10, info + 8, R4); // info.lamports
        a.ldxdw(R4, R3, DATA_LEN);
        a.stxdw(R10, info + 16, R4); // info.data_len
        a.mov64_reg(R4, R3);
        a.add64_imm(R4, i32::from(DATA));
        a.stxdw(R10, info + 24, R4); // info.data
        a.mov64_reg(R4, R3);
        a.add64_imm(R4, i32::from(OWNER));
        a.stxdw(R10, info + 32, R4); // info.owner
        a.stdw(R10, info + 40, 0); // info.rent_epoch
        for (field, flag) in [(48, 1), (49, 2), (50, 3)] {
            a.ldxb(R4, R3, flag);
            a.stxb(R10, info + field, R4); // info.is_signer, is_writable, executable
        }
    }
    a.ldxdw(R3, R10, ACCOUNTS + 8 * program);
    a.add64_imm(R3, i32::from(KEY));
    a.stxdw(R10, IX, R3); // ix.program_id
    a.mov64_reg(R3, R10);
    a.add64_imm(R3, i32::from(METAS));
    a.stxdw(R10, IX + 8, R3); // ix.accounts
    a.stdw(R10, IX + 16, 3); // ix.account_len
    a.mov64_reg(R3, R10);
    a.add64_imm(R3, i32::from(TRANSFER));
    a.stxdw(R10, IX + 24, R3); // ix.data
    a.stdw(R10, IX + 32, 9); // ix.data_len
    a.mov64_reg(R1, R10);
    a.add64_imm(R1, i32::from(IX)); // r1 = &ix
    a.mov64_reg(R2, R10);
    a.add64_imm(R2, i32::from(INFOS)); // r2 = infos
    a.mov64_imm(R3, 3); // three of them
}

/// One sBPF instruction: opcode, dst and src registers, offset, immediate.
fn insn(op: u8, dst: u8, src: u8, off: i16, imm: i32) -> [u8; 8] {
    let mut i = [0u8; 8];
    i[0] = op;
    i[1] = src << 4 | dst;
    i[2..4].copy_from_slice(&off.to_le_bytes());
    i[4..8].copy_from_slice(&imm.to_le_bytes());
    i
}

/// A tiny assembler: instructions, labels for jumps, and the syscalls called (for relocation).
#[derive(Default)]
struct Asm {
    code: Vec<[u8; 8]>,
    labels: HashMap<&'static str, usize>,
    /// Jumps to patch: (instruction index, target label).
    jumps: Vec<(usize, &'static str)>,
    /// Syscall calls: (instruction index, syscall name).
    calls: Vec<(usize, &'static str)>,
}

impl Asm {
    fn emit(&mut self, op: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.code.push(insn(op, dst, src, off, imm));
    }
    fn label(&mut self, name: &'static str) {
        assert!(self.labels.insert(name, self.code.len()).is_none(), "label {name} twice");
    }
    fn jump(&mut self, op: u8, dst: u8, src: u8, imm: i32, target: &'static str) {
        self.jumps.push((self.code.len(), target));
        self.emit(op, dst, src, 0, imm);
    }
    fn mov64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0xb7, dst, 0, 0, imm);
    }
    fn mov64_reg(&mut self, dst: u8, src: u8) {
        self.emit(0xbf, dst, src, 0, 0);
    }
    fn add64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0x07, dst, 0, 0, imm);
    }
    fn add64_reg(&mut self, dst: u8, src: u8) {
        self.emit(0x0f, dst, src, 0, 0);
    }
    fn sub64_reg(&mut self, dst: u8, src: u8) {
        self.emit(0x1f, dst, src, 0, 0);
    }
    fn mul64_reg(&mut self, dst: u8, src: u8) {
        self.emit(0x2f, dst, src, 0, 0);
    }
    fn div64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0x37, dst, 0, 0, imm);
    }
    fn mod64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0x97, dst, 0, 0, imm);
    }
    fn and64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0x57, dst, 0, 0, imm);
    }
    fn lsh64_imm(&mut self, dst: u8, imm: i32) {
        self.emit(0x67, dst, 0, 0, imm);
    }
    /// `dst = imm` (64 bits, two instruction slots).
    fn lddw(&mut self, dst: u8, imm: u64) {
        self.emit(0x18, dst, 0, 0, imm as u32 as i32);
        self.emit(0x00, 0, 0, 0, (imm >> 32) as u32 as i32);
    }
    fn ldxb(&mut self, dst: u8, src: u8, off: i16) {
        self.emit(0x71, dst, src, off, 0);
    }
    fn ldxh(&mut self, dst: u8, src: u8, off: i16) {
        self.emit(0x69, dst, src, off, 0);
    }
    fn ldxdw(&mut self, dst: u8, src: u8, off: i16) {
        self.emit(0x79, dst, src, off, 0);
    }
    fn stb(&mut self, dst: u8, off: i16, imm: u8) {
        self.emit(0x72, dst, 0, off, i32::from(imm));
    }
    fn stw(&mut self, dst: u8, off: i16, imm: i32) {
        self.emit(0x62, dst, 0, off, imm);
    }
    /// `*(u64 *)(dst + off) = imm` (sign-extended).
    fn stdw(&mut self, dst: u8, off: i16, imm: i32) {
        self.emit(0x7a, dst, 0, off, imm);
    }
    fn stxb(&mut self, dst: u8, off: i16, src: u8) {
        self.emit(0x73, dst, src, off, 0);
    }
    fn stxdw(&mut self, dst: u8, off: i16, src: u8) {
        self.emit(0x7b, dst, src, off, 0);
    }
    fn ja(&mut self, target: &'static str) {
        self.jump(0x05, 0, 0, 0, target);
    }
    fn jne_imm(&mut self, dst: u8, imm: i32, target: &'static str) {
        self.jump(0x55, dst, 0, imm, target);
    }
    fn jne_reg(&mut self, dst: u8, src: u8, target: &'static str) {
        self.jump(0x5d, dst, src, 0, target);
    }
    fn jgt_imm(&mut self, dst: u8, imm: i32, target: &'static str) {
        self.jump(0x25, dst, 0, imm, target);
    }
    fn jge_imm(&mut self, dst: u8, imm: i32, target: &'static str) {
        self.jump(0x35, dst, 0, imm, target);
    }
    fn jge_reg(&mut self, dst: u8, src: u8, target: &'static str) {
        self.jump(0x3d, dst, src, 0, target);
    }
    fn jlt_imm(&mut self, dst: u8, imm: i32, target: &'static str) {
        self.jump(0xa5, dst, 0, imm, target);
    }
    fn jle_reg(&mut self, dst: u8, src: u8, target: &'static str) {
        self.jump(0xbd, dst, src, 0, target);
    }
    /// A syscall: `call -1`, which the loader's relocation turns into the hash of `name`.
    fn call_syscall(&mut self, name: &'static str) {
        self.calls.push((self.code.len(), name));
        self.emit(0x85, 0, 0, 0, -1);
    }
    fn exit(&mut self) {
        self.emit(0x95, 0, 0, 0, 0);
    }

    /// The code with jumps resolved, and the syscall calls.
    fn finish(mut self) -> (Vec<u8>, Vec<(usize, &'static str)>) {
        for (at, target) in &self.jumps {
            let to = self.labels[target];
            let off = i16::try_from(to as isize - *at as isize - 1).expect("jump in range");
            self.code[*at][2..4].copy_from_slice(&off.to_le_bytes());
        }
        (self.code.concat(), self.calls)
    }
}

/// The sBPF v0 ELF of `code`, with a relocation for each syscall call in `calls`.
fn elf(code: &[u8], calls: &[(usize, &'static str)]) -> Vec<u8> {
    const EM_BPF: u16 = 247;
    const ET_DYN: u16 = 3;
    const R_BPF_64_32: u64 = 10;
    const SHT_PROGBITS: u32 = 1;
    const SHT_STRTAB: u32 = 3;
    const SHT_DYNAMIC: u32 = 6;
    const SHT_REL: u32 = 9;
    const SHT_DYNSYM: u32 = 11;
    const SHF_ALLOC: u64 = 2;
    const SHF_EXECINSTR: u64 = 4;
    const DT_NULL: u64 = 0;
    const DT_SYMTAB: u64 = 6;
    const DT_REL: u64 = 17;
    const DT_RELSZ: u64 = 18;
    const DT_RELENT: u64 = 19;
    let align8 = |v: &mut Vec<u8>| v.resize(v.len().div_ceil(8) * 8, 0);

    // Symbol names: 1-based symbol index per syscall, in order of first call.
    let mut names: Vec<&str> = Vec::new();
    for (_, name) in calls {
        if !names.contains(name) {
            names.push(name);
        }
    }
    let mut dynstr = vec![0u8];
    let mut dynsym = vec![0u8; 24]; // the null symbol
    for name in &names {
        dynsym.extend_from_slice(&(dynstr.len() as u32).to_le_bytes()); // st_name
        dynsym.extend_from_slice(&[0x10, 0, 0, 0]); // st_info GLOBAL NOTYPE, st_other, st_shndx UNDEF
        dynsym.extend_from_slice(&[0; 16]); // st_value 0 (undefined: a syscall), st_size
        dynstr.extend_from_slice(name.as_bytes());
        dynstr.push(0);
    }

    let mut elf = vec![0u8; 64];
    let text_at = elf.len();
    elf.extend_from_slice(code);
    align8(&mut elf);
    let dynsym_at = elf.len();
    elf.extend_from_slice(&dynsym);
    let dynstr_at = elf.len();
    elf.extend_from_slice(&dynstr);
    align8(&mut elf);
    let rel_at = elf.len();
    for (at, name) in calls {
        let symbol = names.iter().position(|n| n == name).unwrap() as u64 + 1;
        elf.extend_from_slice(&((text_at + 8 * at) as u64).to_le_bytes()); // r_offset: the call
        elf.extend_from_slice(&(symbol << 32 | R_BPF_64_32).to_le_bytes()); // r_info
    }
    let rel_len = elf.len() - rel_at;
    let dynamic_at = elf.len();
    for (tag, value) in [(DT_REL, rel_at), (DT_RELSZ, rel_len), (DT_RELENT, 16), (DT_SYMTAB, dynsym_at), (DT_NULL, 0)] {
        elf.extend_from_slice(&tag.to_le_bytes());
        elf.extend_from_slice(&(value as u64).to_le_bytes());
    }
    let dynamic_len = elf.len() - dynamic_at;
    let shstrtab_at = elf.len();
    let shstrtab = b"\0.text\0.dynsym\0.dynstr\0.rel.dyn\0.dynamic\0.shstrtab\0";
    elf.extend_from_slice(shstrtab);
    align8(&mut elf);
    let headers_at = elf.len();

    // The file header.
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(b"\x7fELF");
    h.extend_from_slice(&[2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // 64-bit, LE, version 1, SysV ABI
    h.extend_from_slice(&ET_DYN.to_le_bytes());
    h.extend_from_slice(&EM_BPF.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes()); // e_version
    h.extend_from_slice(&(text_at as u64).to_le_bytes()); // e_entry: the first instruction
    h.extend_from_slice(&0u64.to_le_bytes()); // e_phoff: no program headers
    h.extend_from_slice(&(headers_at as u64).to_le_bytes()); // e_shoff
    h.extend_from_slice(&0u32.to_le_bytes()); // e_flags: sBPF v0
    for half in [64u16, 56, 0, 64, 7, 6] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        h.extend_from_slice(&half.to_le_bytes());
    }
    elf[..64].copy_from_slice(&h);

    // Section headers; an allocated section is loaded where it lies (address = offset).
    let mut section =
        |name: &str, kind: u32, flags: u64, at: usize, size: usize, link: u32, info: u32, align: u64, entsize: u64| {
            let needle = [b"\0", name.as_bytes(), b"\0"].concat();
            let name = shstrtab.windows(needle.len()).position(|w| w == needle).map_or(0, |p| p as u32 + 1);
            let addr = if flags & SHF_ALLOC != 0 { at as u64 } else { 0 };
            elf.extend_from_slice(&name.to_le_bytes());
            elf.extend_from_slice(&kind.to_le_bytes());
            for v in [flags, addr, at as u64, size as u64] {
                elf.extend_from_slice(&v.to_le_bytes());
            }
            elf.extend_from_slice(&link.to_le_bytes());
            elf.extend_from_slice(&info.to_le_bytes());
            elf.extend_from_slice(&align.to_le_bytes());
            elf.extend_from_slice(&entsize.to_le_bytes());
        };
    section("", 0, 0, 0, 0, 0, 0, 0, 0);
    section(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_at, code.len(), 0, 0, 8, 0);
    // Linked to .dynstr; info: the first global symbol.
    section(".dynsym", SHT_DYNSYM, SHF_ALLOC, dynsym_at, dynsym.len(), 3, 1, 8, 24);
    section(".dynstr", SHT_STRTAB, SHF_ALLOC, dynstr_at, dynstr.len(), 0, 0, 1, 0);
    section(".rel.dyn", SHT_REL, SHF_ALLOC, rel_at, rel_len, 2, 0, 8, 16);
    section(".dynamic", SHT_DYNAMIC, SHF_ALLOC, dynamic_at, dynamic_len, 3, 0, 8, 16);
    section(".shstrtab", SHT_STRTAB, 0, shstrtab_at, shstrtab.len(), 0, 0, 1, 0);
    elf
}
