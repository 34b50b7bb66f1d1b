package courier

import "testing"

func TestIDsAndAcknowledged(t *testing.T) {
	id := [16]byte{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xff}
	s := FormatID(id)
	if s != "0xab0102030405060708090a0b0c0d0eff" {
		t.Fatalf("formatted %s", s)
	}
	for _, in := range []string{s, "0xAB0102030405060708090A0B0C0D0EFF"} {
		if got, ok := ParseID(in); !ok || got != id {
			t.Fatalf("parse %s: %x %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "ab0102030405060708090a0b0c0d0eff", "0xab01", s + "00", "0xzz0102030405060708090a0b0c0d0eff"} {
		if _, ok := ParseID(bad); ok {
			t.Fatalf("parsed %q", bad)
		}
	}
	// 10 fragments, bits 0, 2 and 9 set, and bits past the tenth that do not count.
	m := OutboxMessage{Fragments: 10, Acked: []byte{0x05, 0xfe, 0xff}}
	if n := Acknowledged(m); n != 3 {
		t.Fatalf("acknowledged %d, want 3", n)
	}
}
