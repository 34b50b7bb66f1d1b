package node

import (
	"runtime/debug"

	"golang.org/x/mod/module"
)

// BuildInfo says which build of relayd runs: its version, the VCS revision it was built from and
// the Go version that built it.
type BuildInfo struct {
	// Version is the module version when relayd was installed as a tagged module (go install
	// …@v1.2.3), the release constant Version otherwise (a build from a checkout, whose
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
		return BuildInfo{Version: Version, Revision: "unknown", Go: "unknown"}
	}
	return buildInfoFrom(bi)
}

func buildInfoFrom(bi *debug.BuildInfo) BuildInfo {
	out := BuildInfo{Version: Version, Revision: "unknown", Go: bi.GoVersion}
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
