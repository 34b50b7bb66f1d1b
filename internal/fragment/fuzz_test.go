package fragment

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzDecode: any text either is ErrMalformed or decodes to a frame of the kind its first
// byte names whose encoding is the text again.
func FuzzDecode(f *testing.F) {
	rng := newRand(30)
	texts, _ := Split(testID, randBytes(rng, 1200), [][]byte{randBytes(rng, 100)}, 500)
	for _, text := range texts {
		f.Add(text)
	}
	single, _ := Split(testID, nil, nil, 500)
	f.Add(single[0])
	parts, _ := AckBlockParts(testID, 3, randBytes(rng, 960), 468)
	for _, text := range parts {
		f.Add(text)
	}
	replies, _ := SplitReply(testID, 1, randBytes(rng, 600), 468)
	for _, text := range replies {
		f.Add(text)
	}
	for _, a := range []Ack{
		{ID: testID, Round: 1, Total: 10, Bitmap: []byte{0x05, 0x02}},
		{ID: testID, Round: 2, Total: 140, Complete: true},
		{ID: testID, Total: 17, Bitmap: []byte{0xff, 0xff, 0x00}},
	} {
		text, _ := a.Encode()
		f.Add(text)
	}
	f.Add([]byte{})
	f.Add([]byte{0x11})
	f.Add([]byte{0x25, 0x00})
	f.Fuzz(func(t *testing.T, text []byte) {
		fr, err := Decode(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) || fr != nil {
				t.Fatalf("decode: %v, %v", fr, err)
			}
			return
		}
		again, err := fr.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", fr, err)
		}
		if !bytes.Equal(again, text) {
			t.Fatalf("decoded %+v encodes as\n%x, not\n%x", fr, again, text)
		}
		if text[0] != Version<<4|byte(fr.Kind()) {
			t.Fatalf("first byte %#x decoded as %v", text[0], fr.Kind())
		}
		if fg, ok := fr.(Fragment); ok && (fg.Count > 1) != (fg.Chunk() > 0) {
			t.Fatalf("fragment %d of %d implies chunk %d", fg.Index, fg.Count, fg.Chunk())
		}
	})
}

// FuzzReassembler runs a program of operations against a small Reassembler: genuine
// fragments and ack block parts of three messages, arbitrary texts, altered genuine texts,
// time passing and expiry, status and ack block taking. After every step the reassembler's
// counters and limits hold; no message is delivered twice while its id is remembered; a
// message none of whose frames was forged is delivered intact.
func FuzzReassembler(f *testing.F) {
	rng := newRand(31)
	var msgs []message
	genuine := map[string]bool{}
	var ackParts [][][]byte // per message, every round's parts
	for k, size := range []int{0, 1500, 3000} {
		m := newMessage(f, rng, size, k%2, 500)
		msgs = append(msgs, m)
		var ps [][]byte
		for round := range uint16(4) {
			p, err := AckBlockParts(m.id, round, randBytes(rng, 960), 468)
			if err != nil {
				f.Fatal(err)
			}
			ps = append(ps, p...)
		}
		ackParts = append(ackParts, ps)
		for _, text := range append(m.texts, ps...) {
			genuine[string(text)] = true
		}
	}
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 5, 0, 0, 6, 5, 0})
	f.Add([]byte{0, 2, 0, 0, 2, 1, 1, 2, 0, 1, 2, 1, 1, 2, 2, 5, 2, 0, 2, 3, 5, 2, 4, 7, 4, 200, 0, 2, 0})
	f.Add([]byte{3, 2, 1, 5, 3, 1, 30, 7, 2, 29, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 100, 0, 1, 0, 4, 61, 0, 1, 1})
	f.Fuzz(func(t *testing.T, prog []byte) {
		r := newReassembler(t, Limits{MaxMessages: 3, MaxBytes: 8000, Timeout: time.Minute, RememberFor: 5 * time.Minute,
			MaxRemembered: 2, MaxAckBlocks: 2})
		next := func() int {
			if len(prog) == 0 {
				return 0
			}
			b := prog[0]
			prog = prog[1:]
			return int(b)
		}
		now := t0
		forged := map[ID]bool{}
		for len(prog) > 0 {
			var text []byte
			switch op := next(); op % 6 {
			case 0:
				m := msgs[next()%len(msgs)]
				text = m.texts[next()%len(m.texts)]
			case 1:
				ps := ackParts[next()%len(ackParts)]
				text = ps[next()%len(ps)]
			case 2:
				n := min(next(), len(prog))
				text, prog = prog[:n], prog[n:]
			case 3:
				m := msgs[next()%len(msgs)]
				text = bytes.Clone(m.texts[next()%len(m.texts)])
				text[next()%len(text)] ^= byte(next())
			case 4:
				now = now.Add(time.Duration(next()) * time.Second)
				for _, inc := range r.Expire(now) {
					if inc.Received <= 0 || inc.Received >= inc.Total {
						t.Fatalf("expired %+v", inc)
					}
				}
				checkInvariants(t, r)
				continue
			case 5:
				m := msgs[next()%len(msgs)]
				if ack, ok := r.Status(m.id); ok {
					if text, err := ack.Encode(); err != nil || len(text) > AckSize(int(ack.Total)) {
						t.Fatalf("status %+v: %v", ack, err)
					}
				}
				r.TakeAckBlock(m.id)
				checkInvariants(t, r)
				continue
			}
			fr, err := Decode(text)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatal(err)
				}
				continue
			}
			if !genuine[string(text)] {
				forged[fr.MessageID()] = true
			}
			var k key
			switch fr := fr.(type) {
			case Fragment:
				k = key{id: fr.ID}
			case Reply:
				k = key{id: fr.ID, reply: true, seq: fr.Seq}
			}
			e := r.entries[k]
			wasDone := e != nil && e.done
			res, err := r.Add(now, fr)
			checkInvariants(t, r)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrFull) && !errors.Is(err, ErrKind) {
					t.Fatalf("add: %v", err)
				}
				continue
			}
			if res.Kind == Complete {
				if wasDone {
					t.Fatalf("%x delivered again while remembered", res.ID[:4])
				}
				for _, m := range msgs {
					if m.id == res.ID && !forged[m.id] {
						m.check(t, res)
					}
				}
			}
		}
	})
}
