// Package version says which build of relayd runs: the release, the VCS revision it was built
// from and the Go version that built it (relayd version, GET /node/version, relayd_build_info).
// It imports no relayd package.
package version

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/module"
)

// Release is relayd's release.
const Release = "0.1.0"

// BuildInfo says which build of relayd runs: its version, the VCS revision it was built from and
// the Go version that built it.
type BuildInfo struct {
	// Version is the module version when relayd was installed as a tagged module (go install
	// …@v1.2.3), the release constant Release otherwise (a build from a checkout, whose
	// pseudo-version says less than Revision).
	Version string
	// Revision is the VCS commit the binary was built from, with "-modified" when the working
	// tree had changes; "unknown" when the build recorded none (go build -buildvcs=false, go
	// run, tests).
	Revision string
	// Go is the Go version that built the binary.
	Go string
}

// ReadBuildInfo reads the running binary's BuildInfo from the information the Go toolchain
// embeds (runtime/debug.ReadBuildInfo).
func ReadBuildInfo() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: Release, Revision: "unknown", Go: "unknown"}
	}
	return buildInfoFrom(bi)
}

func buildInfoFrom(bi *debug.BuildInfo) BuildInfo {
	out := BuildInfo{Version: Release, Revision: "unknown", Go: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !module.IsPseudoVersion(v) {
		out.Version = v
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && out.Revision != "unknown" {
		out.Revision += "-modified"
	}
	return out
}

// String renders b on one line: "relayd 0.1.0 (revision 1a2b3c…, go1.26.8)".
func (b BuildInfo) String() string {
	return "relayd " + b.Version + " (revision " + b.Revision + ", " + b.Go + ")"
}

// Collector is relayd_build_info: always 1, its labels say which build runs.
func (b BuildInfo) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "relayd_build_info",
		Help:        "Always 1; the labels say which build runs: version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "go": b.Go}})
	g.Set(1)
	return g
}
