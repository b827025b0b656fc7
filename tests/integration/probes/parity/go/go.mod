module parityprobe

go 1.19
