package capture

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
