//! Classic BPF, as seccomp runs it: the few instructions both filters use
//! (load a word of `struct seccomp_data`, compare, test bits, return) and
//! one assembler that turns named places into the relative jumps the
//! kernel reads. The supervised filter (`rules.rs`) is written as a list
//! of [`Op`]s, and counts no instructions by hand; the plain one is built
//! at compile time (`durability/plain.rs`), whose opcodes these are.

use libc::sock_filter;

// Classic BPF opcodes, from <linux/bpf_common.h>, and where `struct
// seccomp_data` keeps `nr` and `arch`.
use crate::durability::plain::ARG0_LOW_OFFSET;
pub use crate::durability::plain::{ARCH_OFFSET, JEQ_K, JSET_K, LD_W_ABS, NR_OFFSET, RET_K};

/// The low 32 bits of argument `n` in `struct seccomp_data` (little endian).
pub const fn arg_low(n: u32) -> u32 {
    ARG0_LOW_OFFSET + 8 * n
}

/// A place in a program, resolved when it is assembled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(pub u32);

/// One step of a program.
pub enum Op {
    /// An instruction that does not jump.
    Plain(sock_filter),
    /// `code` with `k`, going to `then` when true, else to `otherwise`
    /// (`None`: the next instruction).
    Jump(u16, u32, Label, Option<Label>),
    /// Names the next instruction.
    At(Label),
}

pub fn insn(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// Loads the word at `offset` of `struct seccomp_data`.
pub fn load(offset: u32) -> Op {
    Op::Plain(insn(LD_W_ABS, 0, 0, offset))
}

/// Goes to `then` when the word loaded equals `k`.
pub fn jeq(k: u32, then: Label) -> Op {
    Op::Jump(JEQ_K, k, then, None)
}

/// Returns `k`.
pub fn ret(k: u32) -> Op {
    Op::Plain(insn(RET_K, 0, 0, k))
}

/// Resolves the labels into relative jumps. Jumps go forward only, at
/// most 255 instructions, as classic BPF's conditional jumps do.
pub fn assemble(ops: &[Op]) -> Result<Vec<sock_filter>, String> {
    let mut at = Vec::new();
    let mut pc = 0usize;
    for op in ops {
        match op {
            Op::At(label) => at.push((*label, pc)),
            _ => pc += 1,
        }
    }
    let find = |label: Label| {
        at.iter()
            .find(|(l, _)| *l == label)
            .map(|&(_, pc)| pc)
            .ok_or_else(|| format!("a jump to a missing label {}", label.0))
    };
    let mut program = Vec::new();
    for op in ops {
        let here = program.len();
        let offset = |label: Label| -> Result<u8, String> {
            let to = find(label)?;
            u8::try_from(to.checked_sub(here + 1).ok_or("a jump backwards")?)
                .map_err(|_| "a jump too far".to_string())
        };
        match op {
            Op::At(_) => {}
            Op::Plain(insn) => program.push(*insn),
            Op::Jump(code, k, then, otherwise) => {
                let jf = otherwise.map_or(Ok(0), offset)?;
                program.push(insn(*code, offset(*then)?, jf, *k));
            }
        }
    }
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_forward_offsets() {
        let (a, b) = (Label(1), Label(2));
        let ops = [
            load(NR_OFFSET),
            jeq(7, b),
            Op::Jump(JSET_K, 1, a, Some(b)),
            Op::At(a),
            ret(1),
            Op::At(b),
            ret(2),
        ];
        let program = assemble(&ops).unwrap();
        assert_eq!(program.len(), 5);
        assert_eq!((program[1].jt, program[1].jf), (2, 0));
        assert_eq!((program[2].jt, program[2].jf), (0, 1));
    }

    #[test]
    fn a_missing_label_or_a_backward_jump_is_refused() {
        assert!(assemble(&[jeq(1, Label(9)), ret(0)]).is_err());
        let back = [Op::At(Label(1)), ret(0), jeq(1, Label(1)), ret(0)];
        assert!(assemble(&back).is_err());
    }
}
