package runtime

import (
	"errors"

	"github.com/gantryhq/gantry/internal/sandbox"
)

// AppPort is the PORT an app listens on inside a network of its own (the
// sandbox's isolated network): the same for every app, since each has its
// own namespace. On the host's network the app gets its host port instead.
const AppPort = 3000

// appPort returns the PORT of an app reached on hostPort.
func appPort(sb *sandbox.Sandbox, hostPort int) (int, error) {
	if sb.Mode() == sandbox.ModeNone || sb.Network() == sandbox.NetworkHost {
		return hostPort, nil
	}
	if sb.Network() == sandbox.NetworkNone {
		return 0, errors.New("runtime: server apps need a network, and the sandbox's is none")
	}
	return AppPort, nil
}

// sandboxCommand adds to cmd what ties the run to process p: the host port
// forwarded to the app's PORT and the channel that asks it to terminate.
func (a *App) sandboxCommand(cmd *sandbox.Command, p *process) {
	cmd.Forward = []sandbox.Forward{{HostPort: a.port, Port: a.appPort}}
	cmd.Terminate = p.term
}
