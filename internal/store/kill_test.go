package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
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
	if dir := os.Getenv("RELAYD_STORE_KILL_INBOX"); dir != "" {
		inboxKillChild(dir)
	}
	if dir := os.Getenv("RELAYD_STORE_KILL_OUTBOX"); dir != "" {
		outboxKillChild(dir)
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

// childFail reports an error to the parent and exits.
func childFail(err error) {
	fmt.Println("error", err)
	os.Exit(1)
}

// killedChild runs this test binary as a child with env set, kills it with SIGKILL once it
// has reported n lines, and returns every whole line it wrote before it died (it runs on
// while the parent reads): each an operation that returned, so at most the one it was in
// when killed may have committed unreported.
func killedChild(t *testing.T, env string, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var lines []string
	r := bufio.NewReader(out)
	deadline := time.Now().Add(30 * time.Second)
	killed := false
	for {
		line, err := r.ReadString('\n')
		if err != nil { // the child died; a line cut short is no report
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "error") {
			t.Fatalf("child: %s", line)
		}
		lines = append(lines, line)
		if !killed && (len(lines) >= n || time.Now().After(deadline)) {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
				t.Fatal(err)
			}
			killed = true
		}
	}
	if !killed || len(lines) < n {
		t.Fatalf("child stopped after %d operations, want %d", len(lines), n)
	}
	return lines
}

func killInboxMessage(i int) InboxMessage {
	return testInbox(i, fmt.Sprintf("%d-a", i), fmt.Sprintf("%d-b", i), fmt.Sprintf("%d-c", i))
}

// inboxKillChild is the child side of TestInboxSurvivesKill. It stores inbox messages with
// three reply blocks each, from the number after the messages stored on (so that it first
// stores again the last one a killed run may have stored), and takes a block of each, and of
// the message before it; it reports each operation on stdout only after it returned:
// "put i seq dup" and "took seq block".
func inboxKillChild(dir string) {
	db, err := Open(dir)
	if err != nil {
		childFail(err)
	}
	all, err := allInbox(db)
	if err != nil {
		childFail(err)
	}
	from := 1
	if len(all) > 0 {
		var last int
		fmt.Sscanf(string(all[len(all)-1].ID[8:]), "%d", &last)
		from = last // stored again: a duplicate
	}
	take := func(seq uint64) {
		b, _, err := db.TakeReplyBlock(seq)
		if errors.Is(err, ErrNoReplyBlock) {
			return
		}
		if err != nil {
			childFail(err)
		}
		fmt.Println("took", seq, string(b))
	}
	prev := uint64(0)
	for i := from; ; i++ {
		seq, dup, err := db.PutInbox(killInboxMessage(i))
		if err != nil {
			childFail(err)
		}
		fmt.Println("put", i, seq, dup)
		take(seq)
		if prev != 0 {
			take(prev)
		}
		prev = seq
	}
}

// allInbox lists every stored message.
func allInbox(db *DB) ([]InboxMessage, error) {
	var all []InboxMessage
	for {
		var since uint64
		if len(all) > 0 {
			since = all[len(all)-1].Seq
		}
		msgs, _, err := db.ListInbox(since, MaxInboxList)
		if err != nil || len(msgs) == 0 {
			return all, err
		}
		all = append(all, msgs...)
	}
}

// TestInboxSurvivesKill: a process storing inbox messages and taking their reply blocks is
// killed with SIGKILL at a random moment, three times over; every message it reported stored
// is there exactly once, under the seq it reported, every block it reported taken is gone,
// and a seq is never given twice.
func TestInboxSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir := t.TempDir()
	stored := map[int]uint64{} // message → seq, as reported
	taken := map[string]bool{} // blocks reported taken
	var maxSeq uint64
	for round := range 3 {
		n := 20 + rand.IntN(200)
		lines := killedChild(t, "RELAYD_STORE_KILL_INBOX="+dir, n)
		t.Logf("round %d: killed after %d operations, %d reported", round, n, len(lines))
		for _, line := range lines {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && f[0] == "put":
				i, _ := strconv.Atoi(f[1])
				seq, _ := strconv.ParseUint(f[2], 10, 64)
				if old, ok := stored[i]; ok && (old != seq || f[3] != "true") {
					t.Fatalf("message %d stored as %d, then as %s (dup %s)", i, old, f[2], f[3])
				}
				if _, ok := stored[i]; !ok && seq <= maxSeq {
					t.Fatalf("message %d got seq %d, not above %d", i, seq, maxSeq)
				}
				stored[i], maxSeq = seq, max(maxSeq, seq)
			case len(f) == 3 && f[0] == "took":
				if taken[f[2]] {
					t.Fatalf("block %s taken twice", f[2])
				}
				taken[f[2]] = true
			default:
				t.Fatalf("child: %q", line)
			}
		}
	}

	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	all, err := allInbox(db)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[[16]byte]InboxMessage{}
	for _, m := range all {
		if _, twice := byID[m.ID]; twice {
			t.Fatalf("message %x stored twice", m.ID)
		}
		byID[m.ID] = m
	}
	for i, seq := range stored {
		m, ok := byID[msgID(i)]
		if !ok || m.Seq != seq {
			t.Fatalf("message %d reported stored as %d is gone (%d stored)", i, seq, len(all))
		}
		want := killInboxMessage(i).ReplyBlocks
		// The blocks left are the last ones of the message, none of them reported taken.
		if len(m.ReplyBlocks) > len(want) {
			t.Fatalf("message %d has %d blocks", i, len(m.ReplyBlocks))
		}
		for j, b := range m.ReplyBlocks {
			if !bytes.Equal(b, want[len(want)-len(m.ReplyBlocks)+j]) || taken[string(b)] {
				t.Fatalf("message %d: block %s left (taken %v); blocks %q", i, b, taken[string(b)], m.ReplyBlocks)
			}
		}
	}
	if len(all) > len(stored)+1 {
		t.Fatalf("%d messages stored, %d reported", len(all), len(stored))
	}
	if n, _, _ := db.InboxUsage(); n != len(all) {
		t.Fatalf("usage says %d messages, %d stored", n, len(all))
	}
}

// outboxKillChild is the child side of TestOutboxUpdatesSurviveKill. It resumes the pending
// outbox messages, then stores new ones; after each it updates the five last pending ones:
// one attempt more, the attempt's bit set in Acked, delivered at the fifth. It reports each
// operation only after it returned: "put i" and "upd i attempts".
func outboxKillChild(dir string) {
	db, err := Open(dir)
	if err != nil {
		childFail(err)
	}
	all, err := db.ListOutbox()
	if err != nil {
		childFail(err)
	}
	pending, err := db.ListOutbox(OutboxQueued, OutboxSent)
	if err != nil {
		childFail(err)
	}
	var ids [][16]byte
	for _, m := range pending {
		ids = append(ids, m.ID)
	}
	for i := len(all) + 1; ; i++ {
		if err := db.PutOutbox(testOutbox(i, OutboxQueued)); err != nil {
			childFail(err)
		}
		fmt.Println("put", i)
		ids = append(ids, msgID(i))
		for _, id := range ids[max(0, len(ids)-5):] {
			var attempts int
			err := db.UpdateOutbox(id, func(m *OutboxMessage) error {
				m.Attempts++
				attempts = m.Attempts
				m.State = OutboxSent
				if m.Attempts == 5 {
					m.State = OutboxDelivered
				}
				for len(m.Acked) <= m.Attempts/8 {
					m.Acked = append(m.Acked, 0)
				}
				m.Acked[m.Attempts/8] |= 1 << (m.Attempts % 8)
				return nil
			})
			if err != nil {
				childFail(err)
			}
			fmt.Println("upd", strings.TrimSpace(string(id[8:])), attempts)
		}
		ids = slices.DeleteFunc(ids, func(id [16]byte) bool {
			m, _, err := db.GetOutbox(id)
			if err != nil {
				childFail(err)
			}
			return m.Finished()
		})
	}
}

// TestOutboxUpdatesSurviveKill: a process storing and updating outbox messages is killed with
// SIGKILL at a random moment, three times over; every message it reported stored is there,
// and each has every update reported (and at most one more that committed unreported), all
// of an update's fields together.
func TestOutboxUpdatesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir := t.TempDir()
	attempts := map[int]int{} // message → the last attempt reported
	for round := range 3 {
		n := 20 + rand.IntN(200)
		lines := killedChild(t, "RELAYD_STORE_KILL_OUTBOX="+dir, n)
		t.Logf("round %d: killed after %d operations, %d reported", round, n, len(lines))
		for _, line := range lines {
			f := strings.Fields(line)
			var i, a int
			var err error
			switch {
			case len(f) == 2 && f[0] == "put":
				i, err = strconv.Atoi(f[1])
				if _, ok := attempts[i]; ok {
					t.Fatalf("message %d stored twice", i)
				}
			case len(f) == 3 && f[0] == "upd":
				if i, err = strconv.Atoi(f[1]); err == nil {
					a, err = strconv.Atoi(f[2])
				}
				if a <= attempts[i] {
					t.Fatalf("message %d: attempt %d after %d", i, a, attempts[i])
				}
			default:
				err = fmt.Errorf("unknown")
			}
			if err != nil {
				t.Fatalf("child: %q", line)
			}
			attempts[i] = a
		}
	}

	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pending := 0
	for i, a := range attempts {
		m, ok, err := db.GetOutbox(msgID(i))
		if err != nil || !ok {
			t.Fatalf("message %d reported stored is gone: %v", i, err)
		}
		if m.Attempts != a && m.Attempts != a+1 {
			t.Fatalf("message %d has %d attempts, %d reported", i, m.Attempts, a)
		}
		wantState := OutboxSent
		switch m.Attempts {
		case 0:
			wantState = OutboxQueued
		case 5:
			wantState = OutboxDelivered
		}
		var acked int
		for bit := range 8 * len(m.Acked) {
			if m.Acked[bit/8]&(1<<(bit%8)) != 0 {
				acked++
				if bit == 0 || bit > m.Attempts {
					acked = -1
					break
				}
			}
		}
		if m.State != wantState || acked != m.Attempts {
			t.Fatalf("message %d: %d attempts, state %s, acked %08b: parts of an update are missing", i, m.Attempts, m.State, m.Acked)
		}
		if !m.Finished() {
			pending++
		}
	}
	if all, _ := db.ListOutbox(); len(all) > len(attempts)+1 {
		t.Fatalf("%d messages stored, %d reported", len(all), len(attempts))
	}
	if p, _, _ := db.OutboxUsage(); p < pending || p > pending+1 {
		t.Fatalf("usage says %d pending, %d of the reported messages are", p, pending)
	}
}
