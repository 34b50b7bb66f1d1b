package networks_test

import (
	"reflect"
	"testing"

	"github.com/relayd/relayd/internal/networks"
)

// FuzzParse: Parse never panics on any bytes, and what it accepts Encode writes back as a file
// Parse reads as the same networks.
func FuzzParse(f *testing.F) {
	shipped, err := networks.Encode(networks.Shipped())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(shipped),
		file(""),
		file(`, "peers": ["/ip4/203.0.113.7/tcp/9091/p2p/16Uiu2HAmKkvw5nYY7UCghPJNgMtbtz5Nk6kKkmvrRdsvA9pL5Mya"], "privateAddresses": true`),
		file(`, "description": "x", "provider": "wss://rpc.example.org/v3/"`),
		file(`, "topology": {"layers": 3, "width": 16, "epochBlocks": 720, "minStake": "0.5"}`),
		`{"version": 1, "networks": []}`,
		`{"version": 1, "networks": [{}]}`,
		`{"version": 1, "networks": null}`,
		`{"version": 1.5}`,
		`[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nets, err := networks.Parse(data, "fuzz.json")
		if err != nil {
			return
		}
		out, err := networks.Encode(nets)
		if err != nil {
			t.Fatalf("Encode of what Parse accepted: %v\n%q", err, data)
		}
		back, err := networks.Parse(out, "")
		if err != nil {
			t.Fatalf("Parse of what Encode wrote: %v\n%s", err, out)
		}
		if len(nets) == 0 && len(back) == 0 {
			return
		}
		if !reflect.DeepEqual(nets, back) {
			t.Fatalf("round trip:\n%+v\n%+v", nets, back)
		}
	})
}
