/**
 * The evaluation port (docs/openfeature.md#rpc): flagd's evaluation service (evaluation-rpc.ts)
 * over gRPC on `@grpc/grpc-js` with the limits every gRPC server here has (grpc-listeners.ts), and
 * on the same port the Connect protocol over HTTP/1.1, whose connections go to the REST API's one
 * pipeline (its Connect routes) and nowhere else. Credentials as the sync protocol's (`secret-of.ts`):
 * an API token in `authorization` metadata or the selector; `evaluation.anonymous` or the unix
 * socket for providers that send none. Errors carry the gRPC status of the one table
 * (http/error-handler.ts).
 */

import {
  type Metadata,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
} from '@grpc/grpc-js'
import { InvalidError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'
import { grpcStatusOf } from '../http/error-handler.ts'
import { createNodeBridge } from '../http/node-request-bridge.ts'
import type { RpcPortRequest } from '../http/request-context.ts'
import type { EvaluationRpc, RpcMethod } from './evaluation-rpc.ts'
import { type FrontOptions, GRPC_SERVER_OPTIONS, type GrpcFront, listenGrpc, shutDownServers } from './grpc-listeners.ts'
import { secretOf } from './secret-of.ts'

/** Where and how the service is served (config `evaluation`). */
export interface EvaluationRpcOptions {
  port: number | undefined
  host: string
  socket: string | undefined
  anonymous: boolean
  /** The front's connection limits (tests lower them). */
  front?: Omit<FrontOptions, 'http1'>
}

/** A running evaluation listener. */
export interface EvaluationRpcServer {
  readonly port: number | undefined
  close(): Promise<void>
}

/** Messages an `EventStream` may have waiting for a client that does not read before it is ended. */
export const MAX_UNREAD_EVENTS = 256

const SPEAKS =
  "This port serves flagd's evaluation service: gRPC over HTTP/2 (prior knowledge), or the Connect protocol over HTTP/1.1 (POST /flagd.evaluation.v1.Service/<Method>, application/proto or application/json)."

/** A request that could not be decoded: the handler refuses it with INVALID_ARGUMENT. */
class Undecodable {
  constructor(readonly reason: string) {}
}

/** The grpc-js definition of every method, each handled with the caller its metadata names. */
function grpcService(rpc: EvaluationRpc, anonymousAllowed: boolean, logError: (err: unknown) => void) {
  const definition: Record<string, ServiceDefinition[string]> = {}
  const handlers: Record<string, (...args: never[]) => void> = {}
  const principalOf = (metadata: Metadata): Principal | Promise<Principal> =>
    rpc.principalOf(secretOf(metadata, { providerId: '', selector: '' }), anonymousAllowed)
  const requestOf = (request: object) => {
    if (request instanceof Undecodable) throw new InvalidError(`the request is not a valid message: ${request.reason}`)
    return request
  }
  for (const method of rpc.methods.values()) {
    const key = method.path
    definition[key] = {
      path: method.path,
      requestStream: false,
      responseStream: method.kind === 'stream',
      requestDeserialize: (b: Buffer) => {
        try {
          return method.decodeRequest(b)
        } catch (err) {
          return new Undecodable((err as Error).message)
        }
      },
      requestSerialize: (r: object) => Buffer.from(method.encodeRequest(r)),
      responseSerialize: (r: object) => Buffer.from(method.encodeResponse(r)),
      responseDeserialize: (b: Buffer) => method.decodeResponse(b),
    }
    handlers[key] =
      method.kind === 'unary' ? unary(method, principalOf, requestOf, logError) : stream(method, principalOf, requestOf, logError)
  }
  return { definition: definition as ServiceDefinition, handlers }
}

type PrincipalOf = (metadata: Metadata) => Principal | Promise<Principal>
type RequestOf = (request: object) => object

function unary(
  method: Extract<RpcMethod, { kind: 'unary' }>,
  principalOf: PrincipalOf,
  requestOf: RequestOf,
  logError: (err: unknown) => void,
) {
  return (call: ServerUnaryCall<object, object>, done: sendUnaryData<object>) => {
    const fail = (err: unknown) => done(grpcStatusOf(err, logError))
    try {
      const request = requestOf(call.request)
      const principal = principalOf(call.metadata)
      if (principal instanceof Promise) principal.then((p) => done(null, method.handle(request, p))).catch(fail)
      else done(null, method.handle(request, principal))
    } catch (err) {
      fail(err)
    }
  }
}

function stream(
  method: Extract<RpcMethod, { kind: 'stream' }>,
  principalOf: PrincipalOf,
  requestOf: RequestOf,
  logError: (err: unknown) => void,
) {
  return (call: ServerWritableStream<object, object>) => {
    const fail = (err: unknown) => call.emit('error', grpcStatusOf(err, logError))
    let over = false
    const listeners: (() => void)[] = []
    const closed = () => {
      if (over) return
      over = true
      for (const l of listeners.splice(0)) l()
    }
    call.on('cancelled', closed)
    call.on('close', closed)
    call.on('finish', closed)
    const open = (principal: Principal, request: object) =>
      method.handle(request, principal, {
        write(message) {
          if (over) return
          // a client that does not read holds at most MAX_UNREAD_EVENTS messages here: then its call ends
          if (call.writableLength >= MAX_UNREAD_EVENTS) {
            closed()
            call.emit('error', { code: 8, details: 'the client does not read its event stream' })
            return
          }
          call.write(message)
        },
        end() {
          if (over) return
          closed()
          call.end()
        },
        onClose: (listener) => (over ? listener() : listeners.push(listener)),
      })
    try {
      const request = requestOf(call.request)
      const principal = principalOf(call.metadata)
      if (principal instanceof Promise) principal.then((p) => open(p, request)).catch(fail)
      else open(principal, request)
    } catch (err) {
      fail(err)
    }
  }
}

/**
 * Starts the listeners; `http1` is the REST API's pipeline, which answers the Connect routes.
 * Throws naming the address when one cannot be bound.
 */
export async function startEvaluationServer(
  rpc: EvaluationRpc,
  options: EvaluationRpcOptions,
  http1: (request: RpcPortRequest) => Promise<Response>,
  logError: (err: unknown) => void,
): Promise<EvaluationRpcServer> {
  const accepts = (method: string, path: string) => (method === 'POST' || method === 'OPTIONS') && rpc.methods.has(path)
  const servers: Server[] = []
  const fronts: GrpcFront[] = []
  const serve = async (where: { host: string; port: number } | { socket: string }, anonymousAllowed: boolean) => {
    const server = new Server(GRPC_SERVER_OPTIONS)
    const { definition, handlers } = grpcService(rpc, anonymousAllowed, logError)
    server.addService(definition, handlers as never)
    servers.push(server)
    const http1Bridge = createNodeBridge({ accepts, answer: http1, anonymousAllowed, speaks: SPEAKS })
    const front = await listenGrpc(server, where, { ...options.front, http1: http1Bridge })
    fronts.push(front)
    return front
  }
  let port: number | undefined
  try {
    if (options.port !== undefined) port = (await serve({ host: options.host, port: options.port }, options.anonymous)).port
    if (options.socket !== undefined) await serve({ socket: options.socket }, true)
  } catch (err) {
    await shutDownServers(servers, fronts)
    throw new Error(`cannot serve flagd's evaluation service: ${(err as Error).message}`)
  }
  return {
    port,
    async close() {
      rpc.close()
      await shutDownServers(servers, fronts)
    },
  }
}
