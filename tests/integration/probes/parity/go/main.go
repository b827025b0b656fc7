// The kernel-parity probe's Go twin (see ../parity.h): a Go program, which
// the command serves in seccomp mode, making one sync call per case on one
// kind of descriptor through its own system calls.
//
//	parityprobe CASE AREA
//
// Cases: fsync_badfd fsync_pipe fsync_devnull fsync_opath fsync_file
// fdatasync_badfd fdatasync_pipe file_sync_pipe (os.File.Sync).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// say prints NAME=ok, or NAME= and the errno's number.
func say(name string, err error) {
	var errno syscall.Errno
	switch {
	case err == nil:
		fmt.Printf("%s=ok\n", name)
	case errors.As(err, &errno):
		fmt.Printf("%s=errno%d\n", name, int(errno))
	default:
		fmt.Printf("%s=%v\n", name, err)
	}
}

// oPath is O_PATH, which Go 1.19's syscall package does not name.
const oPath = 0x200000

// descriptor opens one of the kinds of descriptor the cases name.
func descriptor(kind, area string) (int, error) {
	switch kind {
	case "badfd":
		return 99, nil
	case "pipe":
		var ends [2]int
		err := syscall.Pipe(ends[:])
		return ends[1], err
	case "devnull":
		return syscall.Open("/dev/null", syscall.O_WRONLY, 0)
	case "opath":
		return syscall.Open(filepath.Join(area, "f"), oPath, 0)
	case "file":
		return syscall.Open(filepath.Join(area, "f"), syscall.O_RDWR, 0)
	}
	return -1, fmt.Errorf("no such descriptor: %s", kind)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: parityprobe CASE AREA")
		os.Exit(2)
	}
	which, area := os.Args[1], os.Args[2]
	if which == "file_sync_pipe" {
		_, w, err := os.Pipe()
		if err != nil {
			os.Exit(3)
		}
		say("sync", w.Sync())
		return
	}
	call, kind, found := strings.Cut(which, "_")
	fd, err := descriptor(kind, area)
	if !found || err != nil {
		fmt.Fprintln(os.Stderr, which, err)
		os.Exit(3)
	}
	switch call {
	case "fsync":
		say("fsync", syscall.Fsync(fd))
	case "fdatasync":
		say("fdatasync", syscall.Fdatasync(fd))
	default:
		fmt.Fprintln(os.Stderr, "no such case:", which)
		os.Exit(2)
	}
}
