package version

import (
	"runtime/debug"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want BuildInfo
	}{
		{"checkout without vcs", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			BuildInfo{Release, "unknown", "go1.26.8"}},
		{"checkout with vcs", debug.BuildInfo{GoVersion: "go1.26.8",
			Main:     debug.Module{Version: "v0.0.0-20261124072029-c9a7d19eeb88+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "c9a7d19eeb88"}, {Key: "vcs.modified", Value: "true"}}},
			BuildInfo{Release, "c9a7d19eeb88-modified", "go1.26.8"}},
		{"tagged module", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
			BuildInfo{"v1.2.3", "abc", "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildInfoFrom(&tt.bi); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := ReadBuildInfo(); got.Version == "" || got.Revision == "" || got.Go == "" {
		t.Fatalf("ReadBuildInfo left a field empty: %+v", got)
	}
}
