package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHistoryReopen: history records written survive a reopen of the store; a nil value
// deletes.
func TestHistoryReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := db.History()
	if err := h.PutHistory(map[string][]byte{"a": []byte("one"), "b": []byte("two"), "c": []byte("three")}); err != nil {
		t.Fatal(err)
	}
	if err := h.PutHistory(map[string][]byte{"b": nil, "c": []byte("four")}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.History().LoadHistory()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got["a"]) != "one" || string(got["c"]) != "four" {
		t.Fatalf("after reopen: %q", got)
	}
}

// TestHistoryTornWrite: a batch that breaks a rule part way writes nothing of itself (one
// transaction), and the bucket's bounds hold.
func TestHistoryTornWrite(t *testing.T) {
	db, _ := openTest(t)
	h := db.History()
	if err := h.PutHistory(map[string][]byte{"keep": []byte("old")}); err != nil {
		t.Fatal(err)
	}
	for name, batch := range map[string]map[string][]byte{
		"record too long": {"keep": []byte("new"), "x": make([]byte, MaxHistoryRecordLen+1)},
		"key too long":    {"keep": []byte("new"), strings.Repeat("k", MaxHistoryKeyLen+1): []byte("v")},
		"empty key":       {"keep": []byte("new"), "": []byte("v")},
		"too many records": func() map[string][]byte {
			m := map[string][]byte{"keep": []byte("new")}
			for i := range MaxHistoryRecords {
				m[fmt.Sprint("r", i)] = []byte("v")
			}
			return m
		}(),
	} {
		if err := h.PutHistory(batch); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: %v, want ErrInvalid", name, err)
		}
		got, err := h.LoadHistory()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || string(got["keep"]) != "old" {
			t.Fatalf("%s: a refused batch left %d records (keep=%q)", name, len(got), got["keep"])
		}
	}
}

// TestHistoryKillChild is the child of TestHistorySurvivesKill (it does nothing otherwise): it
// writes batches of two records holding the same number, reporting each after PutHistory
// returned, until it is killed.
func TestHistoryKillChild(t *testing.T) {
	dir := os.Getenv("RELAYD_STORE_KILL_HISTORY")
	if dir == "" {
		t.Skip("the child of TestHistorySurvivesKill")
	}
	db, err := Open(dir)
	if err != nil {
		childFail(err)
	}
	big := make([]byte, 8<<10)
	for i := 1; ; i++ {
		v := append([]byte(strconv.Itoa(i)+" "), big...)
		if err := db.History().PutHistory(map[string][]byte{"a": v, "b": v}); err != nil {
			childFail(err)
		}
		fmt.Println("saved", i)
	}
}

// TestHistorySurvivesKill: a process killed with SIGKILL while it writes history batches leaves
// every batch it reported and never half of one.
func TestHistorySurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHistoryKillChild$")
	cmd.Env = append(os.Environ(), "RELAYD_STORE_KILL_HISTORY="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	reported := 0
	deadline := time.Now().Add(30 * time.Second)
	for reported < 20 && lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 2 || f[0] != "saved" {
			t.Fatalf("child: %q", lines.Text())
		}
		reported, _ = strconv.Atoi(f[1])
		if time.Now().After(deadline) {
			t.Fatal("child too slow")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if reported < 20 {
		t.Fatalf("child reported only %d batches", reported)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.History().LoadHistory()
	if err != nil {
		t.Fatal(err)
	}
	na, _ := strconv.Atoi(strings.Fields(string(got["a"][:16]))[0])
	nb, _ := strconv.Atoi(strings.Fields(string(got["b"][:16]))[0])
	if na != nb || na < reported {
		t.Fatalf("after the kill: a holds batch %d, b batch %d; %d reported", na, nb, reported)
	}
}
