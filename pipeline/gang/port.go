package gang

import (
	"fmt"
	"math/rand/v2"
	"net"
)

// Rendezvous ports are chosen in [portLow, portHigh] less the ephemeral
// range: torchrun's default, 29500, is in it.
const (
	portLow  = 20000
	portHigh = 65535
	// portTries bounds the ports tried before giving up.
	portTries = 200
)

// rendezvousPort returns a port in [portLow, portHigh] outside [ephLo,
// ephHi] that can be bound on every interface now (rank 0 binds 0.0.0.0),
// starting at a random one so that gangs started together differ.
func rendezvousPort(ephLo, ephHi int) (int, error) {
	var ports []int
	for p := portLow; p <= portHigh; p++ {
		if p < ephLo || p > ephHi {
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 {
		return 0, fmt.Errorf("find a free port: every port from %d to %d is in the ephemeral range %d-%d", portLow, portHigh, ephLo, ephHi)
	}
	start := rand.IntN(len(ports))
	var last error
	for i := range min(portTries, len(ports)) {
		p := ports[(start+i)%len(ports)]
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			last = err
			continue
		}
		if err := l.Close(); err != nil {
			last = err
			continue
		}
		return p, nil
	}
	return 0, fmt.Errorf("find a free port outside the ephemeral range %d-%d: %w", ephLo, ephHi, last)
}
