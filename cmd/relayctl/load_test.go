package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParseLoadFlags(t *testing.T) {
	o, err := parseLoadFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.env != "cluster.env" || o.relayer != 2 || o.recipient != 4 || o.packets != 60000 || o.rate != 0 || o.window != 0 || o.drop || o.prebuild < 1 || o.cpu != -1 || o.json {
		t.Fatalf("defaults: %+v", o)
	}
	o, err = parseLoadFlags(strings.Fields("--env x.env --relayer 3 --recipient 1 --packets 500 --rate 5000 --window 256 --drop --prebuild 4 --size 20 --cpu 0 --json"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.env != "x.env" || o.relayer != 3 || o.recipient != 1 || o.packets != 500 || o.rate != 5000 || o.window != 256 || !o.drop || o.prebuild != 4 || o.size != 20 || o.cpu != 0 || !o.json {
		t.Fatalf("parsed: %+v", o)
	}
	for _, args := range []string{"--packets 0", "--rate -1", "--window -1", "--prebuild 0", "--relayer 4", "extra", "--nope 1"} {
		if _, err := parseLoadFlags(strings.Fields(args), io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	var help bytes.Buffer
	if _, err := parseLoadFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "usage: relayctl load") {
		t.Fatalf("-h: %v\n%s", err, help.String())
	}
}

func TestLoadMainBadEnv(t *testing.T) {
	var stderr bytes.Buffer
	if code := loadMain(t.Context(), []string{"--env", t.TempDir() + "/missing.env"}, io.Discard, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr.String())
	}
}
