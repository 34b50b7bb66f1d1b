package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/tickets"
)

// killChild is the child side of TestAcknowledgedTicketsSurviveKill: it
// saves acknowledged tickets one batch at a time, reporting each batch on
// stdout only after SaveAcknowledgedTickets returned, until it is killed.
func killChild(dir string) {
	db, err := Open(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	key, _ := crypto.GenerateKey()
	for i := uint64(1); ; i++ {
		t := AckedTicket{Source: crypto.PubkeyToAddress(key.PublicKey), Ticket: tickets.Ticket{ChannelID: [32]byte{7}, Index: i, Epoch: 1, Challenge: [20]byte{9}, WinProb: tickets.MaxWinProb}}
		t.Ticket.Amount.SetUint64(1e16)
		if err := t.Ticket.Sign(key, 1337, common.Address{2}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if err := db.SaveAcknowledgedTickets([]AckedTicket{t}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("saved", i)
	}
}

func TestMain(m *testing.M) {
	if dir := os.Getenv("RELAYD_STORE_KILL_CHILD"); dir != "" {
		killChild(dir)
	}
	os.Exit(m.Run())
}

// TestAcknowledgedTicketsSurviveKill: a process that said a ticket was
// saved is killed with SIGKILL; every ticket it reported is in the store
// afterwards.
func TestAcknowledgedTicketsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "RELAYD_STORE_KILL_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var reported uint64
	deadline := time.Now().Add(30 * time.Second)
	for reported < 20 && lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 2 || f[0] != "saved" {
			t.Fatalf("child: %q", lines.Text())
		}
		reported, _ = strconv.ParseUint(f[1], 10, 64)
		if time.Now().After(deadline) {
			t.Fatal("child too slow")
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()
	if reported < 20 {
		t.Fatalf("child reported only %d tickets", reported)
	}

	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.AcknowledgedTickets()
	if err != nil {
		t.Fatal(err)
	}
	have := map[uint64]bool{}
	for _, a := range got {
		have[a.Ticket.Index] = true
	}
	for i := uint64(1); i <= reported; i++ {
		if !have[i] {
			t.Fatalf("ticket %d was reported saved before the kill but is gone (%d in store)", i, len(got))
		}
	}
}
