package main

import "syscall"

// fsType names the file system dir is on, for the few that matter here
// (tmpfs: an fsync that costs nothing), or "" if this machine cannot tell.
func fsType(dir string) string {
	var st syscall.Statfs_t
	if dir == "" || syscall.Statfs(dir, &st) != nil {
		return ""
	}
	switch uint64(st.Type) {
	case 0x01021994:
		return "tmpfs"
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x794c7630:
		return "overlayfs"
	}
	return ""
}
