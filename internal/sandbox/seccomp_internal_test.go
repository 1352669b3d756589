package sandbox

import (
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData encodes struct seccomp_data for x/net/bpf's VM, which loads
// words big-endian: each 32-bit word the filter reads sits at its
// little-endian offset, in the VM's byte order.
func seccompData(arch, nr uint32, arg0 uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg0:], uint32(arg0))
	binary.BigEndian.PutUint32(b[offArg0+4:], uint32(arg0>>32))
	return b
}

// TestSeccompProgram runs the filter in a BPF interpreter over the cases
// that decide its shape: other architectures, x32, clone3, the denied
// calls, clone's and personality's arguments.
func TestSeccompProgram(t *testing.T) {
	insts, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatalf("the filter does not pass the BPF checker: %v", err)
	}
	type tc struct {
		name string
		arch uint32
		nr   uint32
		arg0 uint64
		want uint32
	}
	cases := []tc{
		{"read", auditArch, unix.SYS_READ, 0, retAllow},
		{"getpid", auditArch, unix.SYS_GETPID, 0, retAllow},
		{"ptrace", auditArch, unix.SYS_PTRACE, 0, retAllow},
		{"another architecture", unix.AUDIT_ARCH_I386, unix.SYS_READ, 0, retENOSYS},
		{"clone3", auditArch, unix.SYS_CLONE3, 0, retENOSYS},
		{"fork", auditArch, unix.SYS_CLONE, uint64(unix.SIGCHLD), retAllow},
		{"thread", auditArch, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
			unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID, retAllow},
		{"clone newuser", auditArch, unix.SYS_CLONE, unix.CLONE_NEWUSER | uint64(unix.SIGCHLD), retEPERM},
		{"clone newnet", auditArch, unix.SYS_CLONE, unix.CLONE_NEWNET, retEPERM},
		{"clone newcgroup", auditArch, unix.SYS_CLONE, unix.CLONE_NEWCGROUP, retEPERM},
		{"personality query", auditArch, unix.SYS_PERSONALITY, 0xffffffff, retAllow},
		{"personality linux", auditArch, unix.SYS_PERSONALITY, 0, retAllow},
		{"personality linux32", auditArch, unix.SYS_PERSONALITY, 8, retAllow},
		{"personality addr_no_randomize", auditArch, unix.SYS_PERSONALITY, 0x0040000, retEPERM},
		{"personality read_implies_exec", auditArch, unix.SYS_PERSONALITY, 0x0400000, retEPERM},
	}
	if x32SyscallBit != 0 {
		cases = append(cases, tc{"x32 read", auditArch, x32SyscallBit | unix.SYS_READ, 0, retENOSYS})
	}
	for _, c := range deniedCalls {
		cases = append(cases, tc{c.name, auditArch, c.nr, 0, retEPERM})
		cases = append(cases, tc{c.name + " of another architecture", unix.AUDIT_ARCH_I386, c.nr, 0, retENOSYS})
	}
	for _, c := range cases {
		got, err := vm.Run(seccompData(c.arch, c.nr, c.arg0))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s: got %#x, want %#x", c.name, got, c.want)
		}
	}
}

// TestSeccompFilterBytes checks the form bubblewrap reads: 8 bytes per
// instruction, within the kernel's limit of 4096 instructions, ending in a
// return, and no call listed twice.
func TestSeccompFilterBytes(t *testing.T) {
	b, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%8 != 0 || len(b)/8 > 4096 || len(b) == 0 {
		t.Fatalf("got %d bytes, want a multiple of 8 up to 4096 instructions", len(b))
	}
	if last := binary.NativeEndian.Uint16(b[len(b)-8:]); last != unix.BPF_RET|unix.BPF_K {
		t.Errorf("got last opcode %#x, want a return", last)
	}
	var nrs []uint32
	for _, c := range deniedCalls {
		if slices.Contains(nrs, c.nr) {
			t.Errorf("%s (%d) is listed twice", c.name, c.nr)
		}
		nrs = append(nrs, c.nr)
	}
}
