package edge

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loops' socket calls, made raw: without the Go scheduler's
// entersyscall/exitsyscall. A loop's thread is locked to it and its
// sockets are non-blocking, so these calls never wait; but one that
// takes longer than a scheduler tick (sendfile of a 200 KB file takes
// ~25 µs) looked blocked to sysmon, which took the processor away, woke
// another thread to spin for work it did not find, and made the loop
// win its processor back on return: futex and nanosleep churn worth ~8%
// of the CPU per request of a 200 KB asset under load. Calls that can
// wait (the blocking epoll_wait, log writes to a file) stay ordinary
// system calls. sendfile reads the page cache; a published file not
// cached yet is read from disk while the loop holds its processor, as
// nginx's worker does.

// rawResult turns a raw call's result into Go's (n, err) form.
func rawResult(r uintptr, e unix.Errno) (int, error) {
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return rawResult(r, e)
}

// rawSend sends p with flags (MSG_MORE, MSG_NOSIGNAL).
func rawSend(fd int, p []byte, flags int) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(flags), 0, 0)
	return rawResult(r, e)
}

// rawWritev writes bufs in one call, with *iov as the reused iovec array.
// It sends at most IOV_MAX (1024) buffers; the caller loops for the rest.
func rawWritev(fd int, bufs [][]byte, iov *[]unix.Iovec) (int, error) {
	v := (*iov)[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if len(v) == 1024 {
			break
		}
		var e unix.Iovec
		e.Base = &b[0]
		e.SetLen(len(b))
		v = append(v, e)
	}
	*iov = v
	if len(v) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)))
	clear(v) // hold no buffer past the call
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawSendfile(out, in int, off *int64, count int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDFILE, uintptr(out), uintptr(in), uintptr(unsafe.Pointer(off)), uintptr(count), 0, 0)
	return rawResult(r, e)
}
