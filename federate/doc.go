// Package federate runs federated DaDiL (Castellon, Montesuma et al.,
// ICASSP 2024) across processes and machines over NATS: every site keeps
// its domain, and only atoms cross the network.
//
// A coordinator (Serve) holds the K atoms of the dictionary; sites (Join)
// hold one domain each: a labeled source or the unlabeled target. The
// protocol, under a subject prefix P (DefaultSubject):
//
//  1. Every site N sends a hello (JSON, request–reply on P.join.N): its
//     name, role, number of features, its inbox subject P.site.N.<token>
//     (a new token for every coordinator it joins) and, for a source, the
//     distinct label values it holds. Once Config.Sites
//     sites have joined the coordinator numbers them by name, takes the
//     union of the sources' label values as the classes and answers every
//     hello with a welcome: the site's id, the classes, the atoms' shape,
//     the settings of the local updates and what summary to send. A site
//     that rejoins under its name later is welcomed at once.
//  2. Every site asked sends its summary (KindSummary, SummaryShape):
//     the per-feature minimum and maximum of its rows when the features
//     are min-max scaled (Config.Scaling), and, a source, the per-feature
//     mean and standard deviation of each of its classes of at least
//     MinSummaryRows rows (Config.Start = StartSummary). The coordinator
//     derives the scaling all sites apply (the one pooled rows would
//     give), draws the atoms from the class summaries (StartSummary; or
//     N(0, I), StartGaussian) and sends every site the scaling
//     (KindScale).
//  3. Every round r the coordinator chooses ⌈C·N⌉ of the N sites with a
//     generator seeded by (seed, r) and sends each of them the atoms
//     (frames of kind KindRound on its inbox) with a seed for its update.
//  4. A chosen site runs Settings.Epochs epochs of Algorithm 2 on its own
//     domain from these atoms and from its own α (dictionary.FitLocal: the
//     label-aware W_c loss for a source, W_2² for the target) and sends
//     the new atoms and its last epoch's mean loss back (KindUpdate on
//     P.up.N), its move of atom k scaled by K·α_k with Config.WeighMoves
//     (WeighMoves). Its Adam moments start afresh, or carry on from the
//     last round it trained in (Config.KeepLocalState,
//     dictionary.LocalState); with Config.ShareMoments it first takes
//     the sites' mean second moments the round's message carries and
//     sends its own after the atoms (moments.go).
//  5. The coordinator waits for the chosen sites' updates at most
//     Config.RoundTimeout, then aggregates those that arrived, in site-id
//     order whatever their order of arrival, into a candidate x̄: their
//     element-wise mean (Average), their mean after matching every atom's
//     points by optimal assignment (WBary) or one of them chosen by the
//     seeded generator (Random); with Config.SourceLogits the label
//     logits of the means are the sources' alone, the target's loss
//     giving them no gradient. Its server optimiser (Config.Server:
//     plain, FedAvgM momentum or FedAdam) then steps the atoms x on the
//     pseudo-gradient x̄ − x; with Config.ShareMoments it averages the
//     sites' second moments too. Given the seed, the atoms depend only on
//     which sites answered.
//  6. After the last round the coordinator sends the final atoms
//     (KindFinal) to every site; a site acknowledges them on P.ack.N. The
//     target fits its α to them (atoms fixed), trains DaDiL-R and DaDiL-E
//     (dictionary.NewModel) and classifies its rows.
//
// Atoms travel in a versioned binary format (see Encode): a 64-byte header
// (magic, version, kind, round, client id, shape, chunk, aux, and the hash
// of the atoms an update was computed from) and float64 values, cut into frames that fit the server's maximal payload. Every
// size is checked against the expected shape before anything is allocated
// (ParseFrame, Assembler); a malformed frame, a frame of the wrong shape
// or a non-finite value costs the sending site its round and never stops
// the coordinator. Frames of another round, of a site not chosen, or
// repeated, are ignored, and an update computed from atoms other than the
// round's is rejected, so no round mixes atoms of two rounds.
//
// With Config.State the coordinator keeps its state in a JetStream object
// store after every round; a coordinator started again on that state
// resumes after the last completed round: it waits for the sites (which
// keep running) to be reachable and sends them the next round's atoms; a
// site that had already trained on them sends the same update again.
// Connections reconnect after a restart of the NATS server; the
// coordinator then sends the round's atoms again to the sites that have
// not answered, and every site its last update.
//
// What leaves a site: its name, role, number of features and (a source)
// its set of label values at join; its summary once before round 1 (the
// ranges of its features, a source's per-class feature means and
// deviations); the atoms after its local epochs, its mean local loss and,
// with Config.ShareMoments, its atoms' Adam second moments, every round it
// is chosen. What never does: its rows, its labels, its α, its
// predictions.
//
// Every subject a site speaks on names it; the coordinator takes a
// message's site from its subject and drops a hello or frame that claims
// another. StartServer runs an embedded NATS server (nats-server as a
// library) that admits only clients presenting a token, or, with
// ServerConfig.Sites, only sites signing with their own NKey, each
// allowed to speak only on its own subjects (SitePermissions); TLS when
// given certificates. Dial connects with a token, an NKey seed or a
// credentials file, over TLS if asked, retrying the first connection
// while no server listens. A coordinator that forms a new federation
// announces itself on P.coordinator until its atoms start: sites that
// joined a coordinator gone before then join the new one.
// RunProblem runs a coordinator and one site per domain of a problem in
// one process, as the demo and the tests do.
package federate
