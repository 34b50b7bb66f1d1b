package identity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
)

func TestKeystoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "id.json")
	id, created, err := LoadOrCreate(path, "pw", true, LightScrypt)
	if err != nil || !created {
		t.Fatalf("create: %v created=%v", err, created)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("keystore mode %v, want 0600", st.Mode().Perm())
	}
	for i := 0; i < 2; i++ {
		again, created, err := LoadOrCreate(path, "pw", true, LightScrypt)
		if err != nil || created {
			t.Fatalf("reload %d: %v created=%v", i, err, created)
		}
		if again.PeerID() != id.PeerID() || again.Address() != id.Address() {
			t.Fatalf("reload gave %s/%s, want %s/%s", again.PeerID(), again.Address(), id.PeerID(), id.Address())
		}
	}
	// The derived names are well formed and checksummed.
	if _, err := peer.Decode(id.PeerID().String()); err != nil {
		t.Fatalf("peer id does not decode: %v", err)
	}
	if !strings.HasPrefix(id.PeerID().String(), "16Uiu2HA") {
		t.Fatalf("peer id %s is not a secp256k1 id", id.PeerID())
	}
	hex := id.Address().Hex()
	if !common.IsHexAddress(hex) || hex == strings.ToLower(hex) {
		t.Fatalf("address %s is not EIP-55", hex)
	}
	pub, err := id.PeerID().ExtractPublicKey()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := pub.Raw()
	if string(raw) != string(id.PublicKey()) {
		t.Fatal("peer id key differs from the node key")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "id.json")
	if _, err := Load(path, "pw"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, _, err := LoadOrCreate(path, "pw", false, LightScrypt); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing file without create: %v", err)
	}
	id, _ := Generate()
	if err := id.Save(path, "pw", LightScrypt); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, "wrong"); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("wrong password: %v", err)
	}
	if err := id.Save(path, "pw", LightScrypt); err == nil {
		t.Fatal("Save overwrote an existing keystore")
	}
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte("{not json"), 0o600)
	if _, err := Load(garbage, "pw"); !errors.Is(err, ErrBadKeystore) {
		t.Fatalf("garbage keystore: %v", err)
	}
}
