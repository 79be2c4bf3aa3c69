package federate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/dadil/dadil/dictionary"
)

// DefaultSubject is the default prefix of the federation's subjects.
const DefaultSubject = "dadil.federate"

// The subjects under the prefix P, where N is a site's name:
//
//	P.join.N            site N's hello (JSON), request–reply: the welcome
//	P.site.N.<token>    frames from the coordinator to site N (its inbox)
//	P.site.N.r.>        replies to site N's requests (its connection's inbox prefix)
//	P.up.N              frames from site N to the coordinator
//	P.ack.N             site N's acknowledgement of the final atoms (JSON)
//	P.coordinator       a coordinator's announcement while it forms a new federation (JSON)
//
// Every subject a site speaks on names it, so that a NATS server that
// gives each site its own credential (ServerConfig.Sites) lets a site
// speak only for itself: the coordinator takes the site a message comes
// from from its subject, never from its content.
func joinSubject(p, name string) string { return p + ".join." + name }
func upSubject(p, name string) string   { return p + ".up." + name }
func ackSubject(p, name string) string  { return p + ".ack." + name }
func announceSubject(p string) string   { return p + ".coordinator" }
func inboxPrefix(p, name string) string { return p + ".site." + name + "." }

// replyPrefix is the inbox prefix of site name's connection: the replies
// to its requests arrive under its own subjects.
func replyPrefix(p, name string) string { return inboxPrefix(p, name) + "r" }

// siteOf returns the site name that ends subject subj after base (P.join.,
// P.up. or P.ack.), or "" if subj is not of that form.
func siteOf(base, subj string) string {
	name, ok := strings.CutPrefix(subj, base)
	if !ok || !ValidSiteName(name) {
		return ""
	}
	return name
}

func validPrefix(p string) bool            { return p != "" && !strings.ContainsAny(p, "*> \t\r\n") }
func protocolErr(f string, a ...any) error { return fmt.Errorf("federate: "+f, a...) }

// ValidSiteName reports whether name may name a site: 1 to 64 printable
// characters, none of them a space, '.', '*' or '>' (a site's name is one
// token of its NATS subjects).
func ValidSiteName(name string) bool {
	return name != "" && len([]rune(name)) <= maxName && strings.IndexFunc(name, func(r rune) bool {
		return !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '.' || r == '*' || r == '>'
	}) < 0
}

// The roles of a site.
const (
	RoleSource = "source"
	RoleTarget = "target"
)

// Limits of the JSON control messages.
const (
	maxControl = 1 << 16 // bytes of a hello, welcome or ack
	maxName    = 64      // characters of a site's name
)

// hello is a site's request to join: what the coordinator needs to shape
// the atoms. A source sends its distinct label values (the classes it
// holds, not its rows' labels); a target sends none.
type hello struct {
	Version  int    `json:"version"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	Features int    `json:"features"`
	Labels   []int  `json:"labels,omitempty"`
	Inbox    string `json:"inbox"`
}

// welcome is the coordinator's reply to a hello: the site's id, the
// federation's label values (class k is Labels[k]), the atoms' shape and
// the settings of the local updates (Settings.Epochs local epochs).
// Ranges and Classes ask for the site's summary (SummaryShape) with its
// features' ranges and its classes' statistics; Scaled announces the
// federation's scaling (KindScale), which the site applies to its rows
// before it trains.
//
// Instance identifies the coordinator process that sent it (see
// announce).
type welcome struct {
	Error    string              `json:"error,omitempty"`
	Instance string              `json:"instance,omitempty"`
	ID       int                 `json:"id"`
	Rounds   int                 `json:"rounds"`
	Labels   []int               `json:"labels"`
	Shape    Shape               `json:"shape"`
	Settings dictionary.Settings `json:"settings"`
	Ranges   bool                `json:"ranges,omitempty"`
	Classes  bool                `json:"classes,omitempty"`
	Scaled   bool                `json:"scaled,omitempty"`
	// KeepState asks the site to keep its local optimisers' state (Adam's
	// moments) from one round it trains in to the next
	// (Config.KeepLocalState).
	KeepState bool `json:"keep_state,omitempty"`
	// WeighMoves asks the site to scale its move of every atom by K·α_ℓk
	// before sending it (Config.WeighMoves).
	WeighMoves bool `json:"weigh_moves,omitempty"`
	// ShareMoments asks the site to send its atoms' second moments with
	// its atoms and to take the mean the coordinator sends
	// (Config.ShareMoments).
	ShareMoments bool `json:"share_moments,omitempty"`
}

// announce is what a coordinator that starts a new federation (not one
// resuming a saved state) publishes on P.coordinator every
// announceEvery until the atoms have started. A site that holds the
// welcome of another instance, or waits for one, joins again: the
// coordinator it joined is gone before the federation started, and
// nothing of it is kept.
type announce struct {
	Version  int    `json:"version"`
	Instance string `json:"instance"`
}

// announceEvery is the period of a forming coordinator's announcements.
const announceEvery = 500 * time.Millisecond

// ack acknowledges the final atoms.
type ack struct {
	ID    int    `json:"id"`
	Round uint32 `json:"round"`
}

// decodeControl decodes a JSON control message of at most maxControl
// bytes, refusing unknown fields.
func decodeControl(b []byte, v any) error {
	if len(b) > maxControl {
		return protocolErr("control message of %d bytes (at most %d)", len(b), maxControl)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return protocolErr("control message: %v", err)
	}
	return nil
}

// validInbox reports whether inbox is a subject P.site.<name>.<token> of
// one token of at most 64 characters.
func validInbox(inbox, p, name string) bool {
	tok, ok := strings.CutPrefix(inbox, inboxPrefix(p, name))
	return ok && tok != "" && len(tok) <= 64 && tok != "r" && validPrefix(tok) && !strings.Contains(tok, ".")
}

// check verifies a hello received under prefix p.
func (h *hello) check(p string) error {
	switch {
	case h.Version != Version:
		return protocolErr("protocol version %d (the coordinator speaks %d)", h.Version, Version)
	case !ValidSiteName(h.Name):
		return protocolErr("site name %q: want 1 to %d printable characters, no space, '.', '*' or '>'", h.Name, maxName)
	case h.Role != RoleSource && h.Role != RoleTarget:
		return protocolErr("site %s: role %q (want source or target)", h.Name, h.Role)
	case h.Features < 1 || h.Features > math.MaxInt32:
		return protocolErr("site %s: %d features", h.Name, h.Features)
	case !validInbox(h.Inbox, p, h.Name):
		return protocolErr("site %s: inbox %q is not a subject %s<token>", h.Name, h.Inbox, inboxPrefix(p, h.Name))
	case h.Role == RoleTarget && len(h.Labels) > 0:
		return protocolErr("site %s: a target sends no labels", h.Name)
	case h.Role == RoleSource && len(h.Labels) < 2:
		return protocolErr("site %s: a source needs at least 2 label values, got %d", h.Name, len(h.Labels))
	case !slices.IsSorted(h.Labels) || len(slices.Compact(slices.Clone(h.Labels))) != len(h.Labels):
		return protocolErr("site %s: label values are not sorted and distinct", h.Name)
	}
	return nil
}

// check verifies a welcome for a site of d features whose label values
// are own (nil for a target).
func (w *welcome) check(d int, own []int) error {
	if w.Error != "" {
		return protocolErr("refused by the coordinator: %s", w.Error)
	}
	if _, err := w.Shape.Values(); err != nil {
		return err
	}
	switch {
	case w.ID < 0 || w.ID > math.MaxInt32:
		return protocolErr("site id %d", w.ID)
	case w.Shape.D != d:
		return protocolErr("the atoms have %d features, the data %d", w.Shape.D, d)
	case w.Shape.C != len(w.Labels) || !slices.IsSorted(w.Labels) || len(slices.Compact(slices.Clone(w.Labels))) != len(w.Labels):
		return protocolErr("%d classes but label values %v", w.Shape.C, w.Labels)
	case w.Settings.Epochs < 1:
		return protocolErr("%d local epochs", w.Settings.Epochs)
	}
	for _, l := range own {
		if _, ok := slices.BinarySearch(w.Labels, l); !ok {
			return protocolErr("the federation's label values %v miss this site's %d", w.Labels, l)
		}
	}
	return nil
}

// roundRand returns the generator of round r's random choices (the sites
// chosen, the Random aggregation), seeded by seed.
func roundRand(seed uint64, r uint32, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream<<32|uint64(r)))
}

// siteSeed returns the seed of site id's local update in round r.
func siteSeed(seed uint64, r uint32, id int) uint64 {
	return roundRand(seed, r, 0x5eed+uint64(id)).Uint64()
}

// choose returns, in increasing order, the ⌈C·N⌉ (at least 1) sites of N
// chosen at random for round r.
func choose(seed uint64, r uint32, N int, C float64) []int {
	m := max(1, min(N, int(math.Ceil(C*float64(N)-1e-9))))
	ids := roundRand(seed, r, 0xc4015e).Perm(N)[:m]
	slices.Sort(ids)
	return ids
}
