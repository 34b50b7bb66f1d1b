package gateway

import (
	"io"
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestMetrics: after one session's exchange the entry's registry counts the reply blocks it sent
// and the answers it received, the exit's the blocks it received and used and the answers it
// sent.
func TestMetrics(t *testing.T) {
	served := tcpServer(t, answer)
	_, entry, ex := pair(t, []string{served}, nil)
	regs := map[*Stack]*prometheus.Registry{entry: prometheus.NewRegistry(), ex: prometheus.NewRegistry()}
	for s, reg := range regs {
		if err := RegisterMetrics(reg, s.Carrier, "no_path", "no_balance"); err != nil {
			t.Fatal(err)
		}
	}
	info, err := entry.Entry.Open(t.Context(), Open{Destination: exitID, Protocol: TCP, Target: served})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, "tcp", info.Listen)
	if _, err := c.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	value := func(reg *prometheus.Registry, name, label, labelValue string) float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.Metric {
				if label == "" || hasLabel(m, label, labelValue) {
					return m.GetCounter().GetValue()
				}
			}
		}
		return -1
	}
	for _, tc := range []struct {
		reg                     *prometheus.Registry
		name, label, labelValue string
	}{
		{regs[entry], "relayd_session_blocks_total", "event", "sent"},
		{regs[entry], "relayd_session_answers_total", "direction", "received"},
		{regs[entry], "relayd_session_frames_total", "event", "sent"},
		{regs[ex], "relayd_session_blocks_total", "event", "received"},
		{regs[ex], "relayd_session_blocks_total", "event", "used"},
		{regs[ex], "relayd_session_answers_total", "direction", "sent"},
	} {
		if v := value(tc.reg, tc.name, tc.label, tc.labelValue); v <= 0 {
			t.Errorf("%s{%s=%q} = %v, want a count", tc.name, tc.label, tc.labelValue, v)
		}
	}
	if v := value(regs[ex], "relayd_session_malformed_total", "", ""); v != 0 {
		t.Errorf("malformed %v, want 0", v)
	}
	// The failure reasons named at registration are there before any failure.
	for _, reason := range []string{"no_path", "no_balance"} {
		if v := value(regs[ex], "relayd_session_send_failures_total", "reason", reason); v != 0 {
			t.Errorf("send failures %q = %v, want a series at 0", reason, v)
		}
	}
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
