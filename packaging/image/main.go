// Command image assembles relayd's container image from a static relayd binary without a
// container daemon, with go-containerregistry, and writes it as a `docker save` tarball (which
// `docker load`, `podman load`, `skopeo copy docker-archive:` and `crane push` read).
// scripts/build-image.sh runs it; docs/PACKAGING.md describes the image.
//
// The image is built FROM scratch: the machines relayd is built on reach no container
// registry, so no base image can be pulled. Its two layers are what distroless/static's
// nonroot variant would give relayd: a base (/etc/passwd and /etc/group naming the nonroot user
// 65532, /etc/nsswitch.conf, the CA certificates of the building host, /data and /tmp) that stays
// the same from one release to the next, and the binary (/usr/local/bin/relayd). Every file
// carries the time given with -created, so the same binary and certificates give the same image
// digest.
//
// This is a module of its own, so that relayd's go.mod does not carry go-containerregistry.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// What the image promises; e2e/packaging_test.go checks each in the built tarball.
const (
	binaryPath = "/usr/local/bin/relayd"
	dataDir    = "/data"
	uid        = 65532 // distroless's nonroot
	user       = "65532:65532"
)

// ports are the node's default listeners: p2p (TCP and QUIC), REST API and admin WebSocket.
var ports = []string{"9091/tcp", "9091/udp", "3001/tcp", "3000/tcp"}

// env are the image's defaults. The p2p listener takes every interface (peers must reach it);
// the REST API and admin server stay on the container's loopback unless the operator sets
// RELAYD_API_HOST and RELAYD_ADMIN_HOST (docs/PACKAGING.md), and the health check reaches them
// there.
var env = []string{
	"PATH=/usr/local/bin",
	"RELAYD_DATA=" + dataDir,
	"RELAYD_HOST=0.0.0.0:9091",
}

// healthcheck runs `relayd healthcheck`, which asks GET /readyz on the REST API (the image has no
// shell and no curl). StartPeriod leaves the node the time to catch up with its chain.
var healthcheck = &v1.HealthConfig{
	Test:        []string{"CMD", binaryPath, "healthcheck"},
	Interval:    30 * time.Second,
	Timeout:     10 * time.Second,
	StartPeriod: 2 * time.Minute,
	Retries:     3,
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	binary := fs.String("binary", "", "the static linux relayd binary (required)")
	cacerts := fs.String("cacerts", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates, installed as /etc/ssl/certs/ca-certificates.crt")
	out := fs.String("out", "", "the tarball to write (required)")
	tag := fs.String("tag", "relayd:dev", "the image's name and tag in the tarball (what docker load names it)")
	arch := fs.String("arch", "amd64", "the binary's GOARCH")
	created := fs.String("created", "1970-01-01T00:00:00Z", "RFC 3339 creation time of the image and its files (the commit's time: reproducible)")
	version := fs.String("version", "", "org.opencontainers.image.version label")
	revision := fs.String("revision", "", "org.opencontainers.image.revision label")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("usage: image -binary FILE -out FILE [flags]")
	}
	when, err := time.Parse(time.RFC3339, *created)
	if err != nil {
		return fmt.Errorf("-created: %w", err)
	}
	ref, err := name.NewTag(*tag)
	if err != nil {
		return fmt.Errorf("-tag: %w", err)
	}
	bin, err := os.ReadFile(*binary)
	if err != nil {
		return err
	}
	certs, err := os.ReadFile(*cacerts)
	if err != nil {
		return err
	}

	base, err := layer(when, baseFiles(certs))
	if err != nil {
		return fmt.Errorf("base layer: %w", err)
	}
	app, err := layer(when, []file{
		{name: "usr/", dir: true, mode: 0o755},
		{name: "usr/local/", dir: true, mode: 0o755},
		{name: "usr/local/bin/", dir: true, mode: 0o755},
		{name: "usr/local/bin/relayd", mode: 0o755, body: bin},
	})
	if err != nil {
		return fmt.Errorf("binary layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, base, app)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", *arch
	cf.Created = v1.Time{Time: when}
	cf.Author = "relayd"
	cf.Config.Entrypoint = []string{binaryPath}
	cf.Config.User = user
	cf.Config.Env = env
	cf.Config.WorkingDir = dataDir
	cf.Config.Volumes = map[string]struct{}{dataDir: {}}
	cf.Config.ExposedPorts = map[string]struct{}{}
	for _, p := range ports {
		cf.Config.ExposedPorts[p] = struct{}{}
	}
	cf.Config.Healthcheck = healthcheck
	cf.Config.StopSignal = "SIGTERM"
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "relayd",
		"org.opencontainers.image.description": "relay node of a privacy-preserving, incentivised mixnet",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     *version,
		"org.opencontainers.image.revision":    *revision,
		"org.opencontainers.image.created":     when.UTC().Format(time.RFC3339),
	}
	// Layer history, as docker history shows it.
	cf.History = []v1.History{
		{Created: v1.Time{Time: when}, CreatedBy: "relayd packaging/image: base (nonroot user 65532, CA certificates, /data)"},
		{Created: v1.Time{Time: when}, CreatedBy: "relayd packaging/image: " + binaryPath},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	if err := tarball.WriteToFile(*out, ref, img); err != nil {
		return err
	}
	// Read back what was written and check its digests, sizes and config.
	written, err := tarball.ImageFromPath(*out, &ref)
	if err != nil {
		return fmt.Errorf("read back %s: %w", *out, err)
	}
	if err := validate.Image(written); err != nil {
		return fmt.Errorf("%s does not validate: %w", *out, err)
	}
	digest, err := written.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s %s\n", *out, ref, digest)
	return nil
}

// baseFiles are the files of distroless/static's nonroot variant that relayd needs.
func baseFiles(certs []byte) []file {
	return []file{
		{name: "etc/", dir: true, mode: 0o755},
		{name: "etc/passwd", mode: 0o644, body: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, body: []byte("hosts: files dns\n")},
		{name: "etc/ssl/", dir: true, mode: 0o755},
		{name: "etc/ssl/certs/", dir: true, mode: 0o755},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: certs},
		{name: "home/", dir: true, mode: 0o755},
		{name: "home/nonroot/", dir: true, mode: 0o700, owner: uid},
		{name: "tmp/", dir: true, mode: 0o1777},
		// The volume's mount point: owned by the nonroot user, so that a fresh named volume
		// (which takes the image's ownership) is writable by the node.
		{name: "data/", dir: true, mode: 0o700, owner: uid},
	}
}

// file is one entry of a layer.
type file struct {
	name  string
	dir   bool
	mode  int64
	owner int // uid and gid; 0 is root
	body  []byte
}

// layer makes a gzip-compressed layer of files, each with the time when.
func layer(when time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			Uid:     f.owner,
			Gid:     f.owner,
			ModTime: when,
			Format:  tar.FormatPAX,
		}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	})
}
