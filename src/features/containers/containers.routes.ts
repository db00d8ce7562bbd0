import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { requireAuth } from "../../http/auth.js";
import { readFormLikeBody } from "../../http/body-parsers.js";
import {
  authErrors,
  errorResponses,
  IdParams,
  jwtSecurity,
  NoContent,
  PageQuery,
} from "../../http/openapi.js";
import type { RouteModule } from "../../shared/feature.js";
import type { ChatService } from "./chat.service.js";
import type { ContainerNotifier } from "./container-notify.service.js";
import {
  AuthCodeInput,
  AuthCodeSchema,
  ContainerInput,
  ContainerNotificationSchema,
  ContainerSchema,
  EmailInput,
  EmailSchema,
  MessageInput,
  MessageSchema,
  Page,
  RecipientInput,
  RecipientItemInput,
  RecipientItemSchema,
  RecipientSchema,
  ReplySchema,
} from "./containers.schemas.js";
import type { ContainersService } from "./containers.service.js";
import type { RecipientsService } from "./recipients.service.js";

// Bodies arrive as JSON, forms or multipart; the services check them (field messages in the spec's shape).
const checkedByService = () => () => true;
const config = { scope: "containers" as const };
const security = jwtSecurity;

/** Reads a JSON, form-urlencoded or multipart body as a flat object. */
const bodyOf = (request: FastifyRequest) => readFormLikeBody(request);

/** The services behind the container routes. */
export interface ContainerRouteDeps {
  containers: ContainersService;
  recipients: RecipientsService;
  chat: ChatService;
  notifier: ContainerNotifier;
}

/**
 * `/v1/module_container/…`: containers, their recipients and recipient items, email text, auth
 * code, send_notification, chat messages and replies.
 */
export function containerRoutes(deps: ContainerRouteDeps): RouteModule {
  const { containers, recipients, chat, notifier } = deps;
  return async (app) => {
    const tags = ["containers"];
    const base = "/v1/module_container";

    app.post(
      `${base}/container/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createContainer",
          tags,
          summary: "Create a container (a recipient session of one or more features), as a draft",
          security,
          body: ContainerInput,
          response: { 201: ContainerSchema, ...errorResponses(400, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await containers.create(requireAuth(request), await bodyOf(request))),
    );

    app.get(
      `${base}/container/`,
      {
        config,
        schema: {
          operationId: "listContainers",
          tags,
          summary: "List the account's containers, newest first",
          security,
          querystring: Type.Object({
            ...PageQuery.properties,
            recipient: Type.Optional(
              Type.String({ description: "Only the container of this recipient id." }),
            ),
          }),
          response: {
            200: Page(ContainerSchema, "ContainerPage"),
            ...errorResponses(400, 404),
            ...authErrors,
          },
        },
      },
      async (request) => containers.list(requireAuth(request), request.query),
    );

    app.get(
      `${base}/container/:id/`,
      {
        config,
        schema: {
          operationId: "getContainer",
          tags,
          summary: "Read a container",
          security,
          params: IdParams,
          response: { 200: ContainerSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => containers.get(requireAuth(request), request.params.id),
    );

    app.patch(
      `${base}/container/:id/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "updateContainer",
          tags,
          summary: "Change a container (page_type only while it is a draft)",
          security,
          params: IdParams,
          body: Type.Partial(ContainerInput),
          response: { 200: ContainerSchema, ...errorResponses(400, 404, 415, 422), ...authErrors },
        },
      },
      async (request) => containers.update(requireAuth(request), request.params.id, await bodyOf(request)),
    );

    app.delete(
      `${base}/container/:id/`,
      {
        config,
        schema: {
          operationId: "deleteContainer",
          tags,
          summary: "Delete a container with its recipients, features, chat and files",
          security,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await containers.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${base}/container/:id/recipient/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createContainerRecipient",
          tags,
          summary: "Add a recipient to a container",
          security,
          params: IdParams,
          body: RecipientInput,
          response: { 201: RecipientSchema, ...errorResponses(400, 404, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await recipients.create(requireAuth(request), request.params.id, await bodyOf(request))),
    );

    app.post(
      `${base}/container/:id/email/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "setContainerEmail",
          tags,
          summary: "Set the container's email text (one per container: a second call replaces it)",
          security,
          params: IdParams,
          body: EmailInput,
          response: { 201: EmailSchema, ...errorResponses(400, 404, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await containers.setEmail(requireAuth(request), request.params.id, await bodyOf(request))),
    );

    app.get(
      `${base}/container/:id/email/`,
      {
        config,
        schema: {
          operationId: "getContainerEmail",
          tags,
          summary: "Read the container's email text (404 when none was set)",
          security,
          params: IdParams,
          response: { 200: EmailSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => containers.getEmail(requireAuth(request), request.params.id),
    );

    app.post(
      `${base}/container/:id/auth_code/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "setContainerAuthCode",
          tags,
          summary: "Ask recipients for a 6-digit code sent to this address before the session shows anything",
          security,
          params: IdParams,
          body: AuthCodeInput,
          response: { 201: AuthCodeSchema, ...errorResponses(400, 404, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await containers.setAuthCode(requireAuth(request), request.params.id, await bodyOf(request))),
    );

    app.delete(
      `${base}/container/:id/auth_code/`,
      {
        config,
        schema: {
          operationId: "removeContainerAuthCode",
          tags,
          summary: "Stop asking recipients for a code",
          security,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await containers.removeAuthCode(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    const sendSchema = (method: "POST" | "GET") => ({
      operationId: method === "POST" ? "sendContainerNotification" : "sendContainerNotificationAlias",
      tags,
      summary:
        method === "POST"
          ? "Notify every item of every active recipient; answers one element per item with its session link"
          : "Alias of POST send_notification for clients that use GET (it sends: keys need the `containers` scope, not `containers:read`)",
      description:
        "Email items get the container's email text plus the session link, SMS items the link; link items are only answered. The first call moves the container from draft to sent (a `container` callback). 422 when the container is complete or expired, or has no items.",
      security,
      params: IdParams,
      response: { 200: Type.Array(ContainerNotificationSchema), ...errorResponses(404, 422), ...authErrors },
    });
    app.post(
      `${base}/container/:id/send_notification/`,
      { config, validatorCompiler: checkedByService, schema: sendSchema("POST") },
      async (request) => notifier.send(requireAuth(request), request.params.id),
    );
    // It sends: the write scope, and no HEAD (which would run it too).
    app.get(
      `${base}/container/:id/send_notification/`,
      { config: { ...config, writes: true }, exposeHeadRoute: false, schema: sendSchema("GET") },
      async (request) => notifier.send(requireAuth(request), request.params.id),
    );

    app.post(
      `${base}/container/:id/close_chat/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "closeContainerChat",
          tags,
          summary: "Close the container's chat for good: no more messages or replies; the features go on",
          description:
            "Owner messages and recipient replies are refused from then on (422 naming why), and each session shows the conversation read-only. Closing cannot be undone. Idempotent: closing a closed chat answers the container as it is (`chat_closed_at` unchanged). The chat also ends by itself when the container expires or is deleted; completing features never ends it.",
          security,
          params: IdParams,
          response: { 200: ContainerSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => chat.close(requireAuth(request), request.params.id),
    );

    // Recipients.
    app.get(
      `${base}/recipient/`,
      {
        config,
        schema: {
          operationId: "listContainerRecipients",
          tags,
          summary: "List the account's recipients, oldest first",
          security,
          querystring: Type.Object({
            ...PageQuery.properties,
            container: Type.Optional(Type.String({ description: "Only this container's recipients." })),
          }),
          response: {
            200: Page(RecipientSchema, "ContainerRecipientPage"),
            ...errorResponses(400, 404),
            ...authErrors,
          },
        },
      },
      async (request) => recipients.list(requireAuth(request), request.query),
    );
    app.get(
      `${base}/recipient/:id/`,
      {
        config,
        schema: {
          operationId: "getContainerRecipient",
          tags,
          summary: "Read a recipient",
          security,
          params: IdParams,
          response: { 200: RecipientSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => recipients.get(requireAuth(request), request.params.id),
    );
    app.patch(
      `${base}/recipient/:id/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "updateContainerRecipient",
          tags,
          summary: "Change a recipient's names or whether it is active",
          security,
          params: IdParams,
          body: RecipientInput,
          response: { 200: RecipientSchema, ...errorResponses(400, 404, 415), ...authErrors },
        },
      },
      async (request) => recipients.update(requireAuth(request), request.params.id, await bodyOf(request)),
    );
    app.delete(
      `${base}/recipient/:id/`,
      {
        config,
        schema: {
          operationId: "deleteContainerRecipient",
          tags,
          summary: "Delete a recipient with its items (their session links stop working)",
          security,
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(404), ...authErrors },
        },
      },
      async (request, reply) => {
        await recipients.delete(requireAuth(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    // Recipient items: `recipientitem` and `recipient_item` (clients use both spellings).
    app.post(
      `${base}/recipient/:id/recipient_item/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createRecipientItem",
          tags,
          summary: "Add a way to reach a recipient: email, sms, or a link the owner hands over",
          security,
          params: IdParams,
          body: RecipientItemInput,
          response: { 201: RecipientItemSchema, ...errorResponses(400, 404, 415), ...authErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await recipients.createItem(requireAuth(request), request.params.id, await bodyOf(request))),
    );
    for (const spelling of ["recipientitem", "recipient_item"] as const) {
      const canonical = spelling === "recipientitem";
      const alias = canonical ? "" : "Alias";
      app.get(
        `${base}/${spelling}/`,
        {
          config,
          schema: {
            operationId: `listRecipientItems${alias}`,
            hide: !canonical,
            tags,
            summary: "List recipient items, oldest first",
            security,
            querystring: Type.Object({
              ...PageQuery.properties,
              recipient: Type.Optional(Type.String({ description: "Only this recipient's items." })),
              recipient__container: Type.Optional(
                Type.String({ description: "Only this container's items." }),
              ),
            }),
            response: {
              200: Page(RecipientItemSchema, "ContainerRecipientItemPage"),
              ...errorResponses(400, 404),
              ...authErrors,
            },
          },
        },
        async (request) => recipients.listItems(requireAuth(request), request.query),
      );
      app.get(
        `${base}/${spelling}/:id/`,
        {
          config,
          schema: {
            operationId: `getRecipientItem${alias}`,
            hide: !canonical,
            tags,
            summary: "Read a recipient item (its `link` once notified)",
            security,
            params: IdParams,
            response: { 200: RecipientItemSchema, ...errorResponses(404), ...authErrors },
          },
        },
        async (request) => recipients.getItem(requireAuth(request), request.params.id),
      );
      app.patch(
        `${base}/${spelling}/:id/`,
        {
          config,
          validatorCompiler: checkedByService,
          schema: {
            operationId: `updateRecipientItem${alias}`,
            hide: !canonical,
            tags,
            summary: "Change a recipient item's channel or value (its session link stays)",
            security,
            params: IdParams,
            body: Type.Partial(RecipientItemInput),
            response: { 200: RecipientItemSchema, ...errorResponses(400, 404, 415), ...authErrors },
          },
        },
        async (request) =>
          recipients.updateItem(requireAuth(request), request.params.id, await bodyOf(request)),
      );
      app.delete(
        `${base}/${spelling}/:id/`,
        {
          config,
          schema: {
            operationId: `deleteRecipientItem${alias}`,
            hide: !canonical,
            tags,
            summary: "Delete a recipient item (its session link stops working)",
            security,
            params: IdParams,
            response: { 204: NoContent, ...errorResponses(404), ...authErrors },
          },
        },
        async (request, reply) => {
          await recipients.deleteItem(requireAuth(request), request.params.id);
          return reply.code(204).send(null);
        },
      );
    }

    // Chat.
    app.post(
      `${base}/message/`,
      {
        config,
        validatorCompiler: checkedByService,
        schema: {
          operationId: "createContainerMessage",
          tags,
          summary: "Post a chat message to a container's recipients (JSON, form or multipart)",
          description:
            "422 once the chat is closed (by `close_chat`, or the container expired), with a `detail` naming why. Completing features never closes the chat.",
          security,
          body: MessageInput,
          response: { 201: MessageSchema, ...errorResponses(400, 415, 422), ...authErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await chat.post(requireAuth(request), await bodyOf(request))),
    );
    app.get(
      `${base}/message/`,
      {
        config,
        schema: {
          operationId: "listContainerMessages",
          tags,
          summary: "List chat messages, oldest first",
          security,
          querystring: Type.Object({
            ...PageQuery.properties,
            container: Type.Optional(Type.String({ description: "Only this container's messages." })),
          }),
          response: {
            200: Page(MessageSchema, "ContainerMessagePage"),
            ...errorResponses(400, 404),
            ...authErrors,
          },
        },
      },
      async (request) => chat.listMessages(requireAuth(request), request.query),
    );
    app.get(
      `${base}/message/:id/`,
      {
        config,
        schema: {
          operationId: "getContainerMessage",
          tags,
          summary: "Read a chat message",
          security,
          params: IdParams,
          response: { 200: MessageSchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => chat.getMessage(requireAuth(request), request.params.id),
    );
    app.get(
      `${base}/messagereply/`,
      {
        config,
        schema: {
          operationId: "listContainerMessageReplies",
          tags,
          summary: "List recipients' chat replies, oldest first",
          security,
          querystring: Type.Object({
            ...PageQuery.properties,
            recipient__container: Type.Optional(
              Type.String({ description: "Only this container's replies." }),
            ),
            container: Type.Optional(Type.String({ description: "Same as recipient__container." })),
            recipient: Type.Optional(Type.String({ description: "Only this recipient's replies." })),
          }),
          response: {
            200: Page(ReplySchema, "ContainerMessageReplyPage"),
            ...errorResponses(400, 404),
            ...authErrors,
          },
        },
      },
      async (request) => chat.listReplies(requireAuth(request), request.query),
    );
    app.get(
      `${base}/messagereply/:id/`,
      {
        config,
        schema: {
          operationId: "getContainerMessageReply",
          tags,
          summary: "Read a chat reply",
          security,
          params: IdParams,
          response: { 200: ReplySchema, ...errorResponses(404), ...authErrors },
        },
      },
      async (request) => chat.getReply(requireAuth(request), request.params.id),
    );
  };
}
