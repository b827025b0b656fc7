module seccompprobe

go 1.19
