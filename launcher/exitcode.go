package launcher

// RankExitCode is ExitCode: the failed rank container's exit code (0 if it
// has none). The pod runtime, which links no launcher, maps a failed
// gang's exit code through it.
func (e *FailedError) RankExitCode() int32 { return e.ExitCode }
