package gang

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePortOutsideEphemeral: the rendezvous port of a local gang is
// outside the kernel's ephemeral range (which 127.0.0.1:0 picks from, and
// which outgoing connections take ports from until rank 0 binds it), and
// free on every interface.
func TestFreePortOutsideEphemeral(t *testing.T) {
	lo, hi := ephemeralRange()
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p >= lo && p <= hi {
			t.Fatalf("FreePort() = %d, in the ephemeral range %d-%d", p, lo, hi)
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			t.Fatalf("FreePort() = %d, not free: %v", p, err)
		}
		l.Close()
	}
	// Every port but one taken by the ephemeral range: that one, or none.
	if p, err := rendezvousPort(portLow+1, portHigh); err == nil && p != portLow {
		t.Errorf("rendezvousPort(all but %d) = %d", portLow, p)
	}
	if _, err := rendezvousPort(1, portHigh); err == nil {
		t.Error("rendezvousPort(every port ephemeral) succeeded")
	}
}
