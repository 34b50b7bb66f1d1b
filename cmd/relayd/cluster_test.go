package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/settings"
)

// TestClusterFlags: defaults, overrides, and bad flags exit 2 with a
// one-line message naming the flag, before anything starts.
func TestClusterFlags(t *testing.T) {
	cfg, err := parseClusterFlags(nil, &bytes.Buffer{})
	if err != nil || cfg.Nodes != 5 || cfg.APIPortBase != 13301 || cfg.AdminPortBase != 19501 ||
		cfg.P2PPortBase != 19091 || cfg.ChainPort != 8545 || cfg.EnvFile != "cluster.env" || cfg.DataDir != "" ||
		cfg.ChannelFunding.String() != "100000000000000000000" || cfg.APIToken != "relayd-local-cluster" {
		t.Fatalf("defaults %+v, %v", cfg, err)
	}
	cfg, err = parseClusterFlags([]string{"--nodes", "7", "--channelFunding", "2.5", "--data", "/x"}, &bytes.Buffer{})
	if err != nil || cfg.Nodes != 7 || cfg.ChannelFunding.String() != "2500000000000000000" || cfg.DataDir != "/x" {
		t.Fatalf("overrides %+v, %v", cfg, err)
	}
	if cfg.MixDelayMean != settings.Defaults().MixDelayMean || cfg.MixDelayMax != 0 || cfg.CoverRate != settings.Defaults().CoverRate {
		t.Fatalf("mixing defaults: mean %v max %v cover %v", cfg.MixDelayMean, cfg.MixDelayMax, cfg.CoverRate)
	}
	cfg, err = parseClusterFlags([]string{"--mixDelayMean", "5ms", "--mixDelayMax", "100ms", "--coverRate", "1.5"}, &bytes.Buffer{})
	if err != nil || cfg.MixDelayMean != 5*time.Millisecond || cfg.MixDelayMax != 100*time.Millisecond || cfg.CoverRate != 1.5 {
		t.Fatalf("mixing flags: %+v, %v", cfg, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "2"}, "--nodes "},
		{[]string{"--apiToken", "short"}, "--apiToken "},
		{[]string{"--adminPortBase", "13302"}, "--adminPortBase "},
		{[]string{"--channelFunding", "x"}, "channelFunding"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--coverRate", "-1"}, "--coverRate "},
		{[]string{"--mixDelayMean", "50ms", "--mixDelayMax", "20ms"}, "--mixDelayMax "},
	} {
		var stdout, stderr bytes.Buffer
		if code := clusterMain(context.Background(), "/nonexistent/relayd", tc.args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", tc.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q should contain %q", tc.args, stderr.String(), tc.want)
		}
	}
}
