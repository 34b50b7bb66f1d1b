package fragment

import (
	"errors"
	"slices"
	"testing"
)

func TestOutgoing(t *testing.T) {
	o, err := NewOutgoing(testID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if o.ID() != testID || o.Total() != 10 || o.Done() || !slices.Equal(o.Pending(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("new: %v", o.Pending())
	}
	steps := []struct {
		name  string
		ack   Ack
		fresh []int
	}{
		{"first ack", Ack{ID: testID, Round: 0, Total: 10, Bitmap: []byte{0b00000101, 0b10}}, []int{0, 2, 9}},
		{"same again", Ack{ID: testID, Round: 0, Total: 10, Bitmap: []byte{0b00000101, 0b10}}, nil},
		{"older round, fewer", Ack{ID: testID, Round: 0, Total: 10, Bitmap: []byte{0b00000001, 0}}, nil},
		{"other id", Ack{ID: ID{1}, Total: 10, Bitmap: []byte{0xff, 0}}, nil},
		{"other total", Ack{ID: testID, Total: 11, Bitmap: []byte{0xff, 0}}, nil},
		{"malformed", Ack{ID: testID, Total: 10, Bitmap: []byte{0xff}}, nil},
		{"more", Ack{ID: testID, Round: 1, Total: 10, Bitmap: []byte{0b00011111, 0b10}}, []int{1, 3, 4}},
		{"complete", Ack{ID: testID, Round: 2, Total: 10, Complete: true}, []int{5, 6, 7, 8}},
		{"complete again", Ack{ID: testID, Round: 3, Total: 10, Complete: true}, nil},
	}
	for _, s := range steps {
		if got := o.Apply(s.ack); !slices.Equal(got, s.fresh) {
			t.Fatalf("%s: newly acknowledged %v, want %v", s.name, got, s.fresh)
		}
		if s.name == "more" && (!slices.Equal(o.Pending(), []int{5, 6, 7, 8}) || o.Done() || !o.Acked(4) || o.Acked(5)) {
			t.Fatalf("after %s: pending %v", s.name, o.Pending())
		}
	}
	if !o.Done() || len(o.Pending()) != 0 || o.Acked(10) || o.Acked(-1) {
		t.Fatalf("after completion: pending %v", o.Pending())
	}
	for _, n := range []int{0, -1, MaxFragments + 1} {
		if _, err := NewOutgoing(testID, n); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%d fragments: %v", n, err)
		}
	}
}
