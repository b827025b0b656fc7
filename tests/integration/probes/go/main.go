// A Go program that syncs through its own system calls, never libc's, for
// the seccomp tests: the Go twin of probes/seccomp_sync.c.
//
//	seccompprobe calls          one line per call: NAME=0 or NAME=ERRNONAME
//	seccompprobe loop FILE N    N times: write a block to FILE, fsync it
//	seccompprobe flags FILE N   opens FILE with O_SYNC and with O_DSYNC (and
//	                            O_SYNC by openat2), says whether each is kept,
//	                            writes N blocks through the first two and
//	                            reads them back
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
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

// kept says whether f's open file description still has flag.
func kept(name string, f *os.File, flag int) {
	got, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
	switch {
	case e != 0:
		fmt.Printf("%s=%s\n", name, errnoName(e))
	case int(got)&flag == flag:
		fmt.Printf("%s=kept\n", name)
	default:
		fmt.Printf("%s=dropped\n", name)
	}
}

func flags(path string, count int) error {
	synced, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_SYNC, 0640)
	if err != nil {
		return err
	}
	kept("open_sync", synced, syscall.O_SYNC)
	dsynced, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DSYNC, 0)
	if err != nil {
		return err
	}
	kept("open_dsync", dsynced, syscall.O_DSYNC)
	// openat2 (437 in every table), whose flags are in memory: struct
	// open_how {flags, mode, resolve}.
	how := [3]uint64{uint64(syscall.O_WRONLY | syscall.O_SYNC), 0, 0}
	path0, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	fd, _, e := syscall.Syscall6(437, uintptr(0xffffff9c), uintptr(unsafe.Pointer(path0)),
		uintptr(unsafe.Pointer(&how)), 24, 0, 0)
	if e != 0 {
		fmt.Printf("openat2_sync=%s\n", errnoName(e))
	} else {
		opened := os.NewFile(fd, path)
		kept("openat2_sync", opened, syscall.O_SYNC)
		opened.Close()
	}
	block := bytes.Repeat([]byte("g"), 4096)
	for i := 0; i < count; i++ {
		if _, err := synced.WriteAt(block, int64(i)*4096); err != nil {
			return err
		}
		if _, err := dsynced.WriteAt(block, int64(count+i)*4096); err != nil {
			return err
		}
	}
	fmt.Printf("written=%d\n", 2*count)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fmt.Printf("intact=%v\n", bytes.Equal(data, bytes.Repeat(block, 2*count)))
	return nil
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
	case len(os.Args) == 4 && os.Args[1] == "flags":
		var n int
		if n, err = strconv.Atoi(os.Args[3]); err == nil {
			err = flags(os.Args[2], n)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: seccompprobe calls | loop FILE N | flags FILE N")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
