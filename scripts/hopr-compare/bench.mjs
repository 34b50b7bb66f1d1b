// Times the original 2022 node's packet code (npm @hoprnet/hopr-core 1.93.6 with
// @hoprnet/hopr-utils, native secp256k1 4.0.3) on one thread, for run.sh, which alternates it
// with relayd's Go benchmarks:
//
//   create: Packet.create over 2 relayers and the recipient: key shares, proof-of-relay values
//           and strings, the Sphinx packet, the acknowledgement challenge (signed) and the first
//           ticket (signed), with an in-memory stand-in for the node's database (the one of
//           hopr-core's own packet.spec.js);
//   hop:    one relayer's whole packet work as hopr-core's forward.js and acknowledgement.js do
//           it: deserialize (Sphinx transform, the challenge's signature), packet tag,
//           ticket validation (signer recovery), unacknowledged ticket stored, forward
//           transform (next ticket and challenge signed), serialize, the acknowledgement to the
//           previous hop (signed), then the next hop's acknowledgement (signature checked,
//           challenge solved, acknowledged ticket stored);
//   ackChallengeSign: AcknowledgementChallenge.create alone, the signature the original's
//           create makes besides the ticket's (relayd's protocol has no such signature).
//
// Usage: node --experimental-wasm-modules bench.mjs [iterations]   (prints one JSON line)
import { Packet, INTERMEDIATE_HOPS } from '@hoprnet/hopr-core/lib/messages/packet.js'
import { AcknowledgementChallenge } from '@hoprnet/hopr-core/lib/messages/acknowledgementChallenge.js'
import { Acknowledgement } from '@hoprnet/hopr-core/lib/messages/acknowledgement.js'
import {
  UINT256,
  Balance,
  PRICE_PER_PACKET,
  u8aToHex,
  AcknowledgedTicket,
  ChannelStatus,
  Hash
} from '@hoprnet/hopr-core/node_modules/@hoprnet/hopr-utils/lib/index.js'
import { createSecp256k1PeerId } from '@libp2p/peer-id-factory'
import BN from 'bn.js'

const iterations = Number(process.argv[2] ?? 200)
if (!(iterations >= 1 && iterations <= 100000)) {
  throw new Error(`iterations must be 1 to 100000, not ${process.argv[2]}`)
}

// A node's database as the calls below use it, in memory (hopr-core's packet.spec.js mock,
// extended with what ticket validation and acknowledgements read and write).
function mockDB() {
  const tags = new Set()
  const pending = new Map()
  const channel = {
    getId: () => ({ toHex: () => '0xdeadbeef', hash: () => Hash.create(new Uint8Array([1])) }),
    status: ChannelStatus.Open,
    ticketEpoch: new UINT256(new BN(0)),
    channelEpoch: new UINT256(new BN(0)),
    balance: new Balance(new BN(1_000_000).mul(PRICE_PER_PACKET))
  }
  return {
    getChannelTo: async () => channel,
    getChannelFrom: async () => channel,
    getCurrentTicketIndex: async () => undefined,
    setCurrentTicketIndex: async () => {},
    checkAndSetPacketTag: async (tag) => {
      const t = u8aToHex(tag)
      if (tags.has(t)) return true
      tags.add(t)
      return false
    },
    markPending: async () => {},
    markRejected: async () => {},
    getTickets: async () => [],
    getPendingBalanceTo: async () => new Balance(new BN(0)),
    storePendingAcknowledgement: async (challenge, isMessageSender, ticket) => {
      pending.set(challenge.toHex(), { isMessageSender, ticket })
    },
    getPendingAcknowledgement: async (challenge) => {
      const p = pending.get(challenge.toHex())
      if (!p) throw Object.assign(new Error('not found'), { notFound: true })
      return p
    },
    replaceUnAckWithAck: async (challenge) => {
      pending.delete(challenge.toHex())
    }
  }
}

const [self, r1, r2, dest] = await Promise.all([0, 1, 2, 3].map(() => createSecp256k1PeerId()))
const path = [r1, r2, dest] // 2 relayers and the recipient, as relayd's benchmarks
if (path.length > INTERMEDIATE_HOPS + 1) throw new Error('path too long')
const msg = new Uint8Array(100).fill(0x61)
const PREIMAGE_PLACE_HOLDER = new Hash(new Uint8Array(Hash.SIZE).fill(0xff)) // acknowledgement.js's
const senderDB = mockDB()

async function timeCreate(n) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    await Packet.create(msg, path, self, senderDB)
  }
  return Number(process.hrtime.bigint() - t0) / n
}

// The hop's inputs: packets as the sender sends them, and the acknowledgement the next hop
// returns for each (built by running the next hop's code on the relayer's output; signatures
// are deterministic, so the relayer's timed run produces the same challenge).
async function hopInputs(n) {
  const inputs = []
  for (let i = 0; i < n; i++) {
    const p = await Packet.create(msg, path, self, senderDB)
    const bytes = p.serialize()
    const at1 = Packet.deserialize(bytes, r1, self)
    const db1 = mockDB()
    await at1.forwardTransform(r1, db1)
    const at2 = Packet.deserialize(at1.serialize(), r2, r1)
    const ack = at2.createAcknowledgement(r2).serialize()
    inputs.push({ bytes, ack })
  }
  return inputs
}

async function timeHop(inputs) {
  const db = mockDB()
  const t0 = process.hrtime.bigint()
  for (const { bytes, ack } of inputs) {
    const p = Packet.deserialize(bytes, r1, self)
    await p.checkPacketTag(db)
    await p.validateUnacknowledgedTicket(db, false)
    await p.storeUnacknowledgedTicket(db)
    await p.forwardTransform(r1, db)
    p.serialize()
    p.createAcknowledgement(r1).serialize()
    // The next hop's acknowledgement.
    const a = Acknowledgement.deserialize(ack, r1, r2)
    const pending = await db.getPendingAcknowledgement(a.ackChallenge)
    const unack = pending.ticket
    if (!unack.verifyChallenge(a.ackKeyShare)) throw new Error('acknowledgement does not solve the challenge')
    await db.getChannelFrom(unack.signer)
    const response = unack.getResponse(a.ackKeyShare)
    const acked = new AcknowledgedTicket(unack.ticket, response, PREIMAGE_PLACE_HOLDER, unack.signer)
    await db.replaceUnAckWithAck(a.ackChallenge, acked)
  }
  return Number(process.hrtime.bigint() - t0) / inputs.length
}

async function timeAckChallengeSign(n) {
  const ch = (await Packet.create(msg, path, self, senderDB)).ackChallenge
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) AcknowledgementChallenge.create(ch, self)
  return Number(process.hrtime.bigint() - t0) / n
}

// Warm up the JIT and the native module, then measure.
await timeCreate(Math.min(20, iterations))
await timeHop(await hopInputs(Math.min(10, iterations)))
const createNs = await timeCreate(iterations)
const hopNs = await timeHop(await hopInputs(iterations))
const ackChallengeSignNs = await timeAckChallengeSign(iterations)
console.log(JSON.stringify({ iterations, createNs, hopNs, ackChallengeSignNs, node: process.version }))
