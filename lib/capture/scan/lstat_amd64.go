package scan

import "syscall"

const sysFstatat = syscall.SYS_NEWFSTATAT
