//go:build !linux

package build

import "context"

// runHelper does job in this process: the idle classes are Linux's.
func runHelper(ctx context.Context, job helperJob) (helperResult, error) {
	if err := ctx.Err(); err != nil {
		return helperResult{}, err
	}
	return doHelperJob(job), nil
}

func idleProcess() {}
