// A Go program that syncs through its own system calls, never libc's, for
// the seccomp tests: the Go twin of probes/seccomp_sync.c.
//
//	seccompprobe calls          one line per call: NAME=0 or NAME=ERRNONAME
//	seccompprobe loop FILE N    N times: write a block to FILE, fsync it
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// show prints NAME=0, or NAME= and the errno's name.
func show(name string, err error) {
	var errno syscall.Errno
	switch {
	case err == nil:
		fmt.Printf("%s=0\n", name)
	case errors.As(err, &errno):
		fmt.Printf("%s=%s\n", name, errnoName(errno))
	default:
		fmt.Printf("%s=%v\n", name, err)
	}
}

func errnoName(errno syscall.Errno) string {
	switch errno {
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.EBADF:
		return "EBADF"
	case syscall.ESPIPE:
		return "ESPIPE"
	}
	return fmt.Sprintf("errno%d", int(errno))
}

func calls() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	fd := int(w.Fd())
	show("fsync_pipe", syscall.Fsync(fd))
	show("fdatasync_pipe", syscall.Fdatasync(fd))
	show("fsync_badfd", syscall.Fsync(-1))
	_, _, e := syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, uintptr(fd), 0, 0, 2, 0, 0)
	show("sync_file_range_pipe", errnoOrNil(e))
	show("file_sync_pipe", w.Sync())
	_, err = w.Write([]byte("x"))
	show("write_pipe", err)
	return nil
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func loop(path string, count int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	block := make([]byte, 4096)
	for i := 0; i < count; i++ {
		if _, err := f.WriteAt(block, int64(i%16)*4096); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
	}
	fmt.Printf("synced %d\n", count)
	return f.Close()
}

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "calls":
		err = calls()
	case len(os.Args) == 4 && os.Args[1] == "loop":
		var n int
		if n, err = strconv.Atoi(os.Args[3]); err == nil {
			err = loop(os.Args[2], n)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: seccompprobe calls | loop FILE N")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
