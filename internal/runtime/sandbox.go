package runtime

import "github.com/gantryhq/gantry/internal/sandbox"

// terminateSupported reports whether the sandbox can deliver SIGTERM to a
// running command. Until it can, Stop kills apps at once (SIGKILL to the
// whole tree) instead of giving them StopGrace to finish.
const terminateSupported = false

// sandboxCommand adds to cmd what ties the run to process p: the channel
// that asks it to terminate and, with a private network, the forwarded
// port.
func (a *App) sandboxCommand(cmd *sandbox.Command, p *process) {}
