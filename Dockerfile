# warren on Node 24 LTS. TypeScript runs through Node's type stripping: no build step.
# Two stages: production dependencies are installed in the first, the second holds them and the sources only.
# `docker build --build-arg WITH_CLIS=true .` adds the verified coding-agent CLIs (claude, opencode) on PATH.
# The base image is the exact Node of package-lock.json's `node` (test/deploy-files.test.ts keeps them equal).
# Run it with an init as PID 1 (`docker run --init`, compose `init: true`) so CLI agents' orphans are reaped.

FROM node:24.21.0-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# package.json's overrides point at stand-ins in vendor/ (native add-ons left out on purpose).
COPY vendor ./vendor
# The `node` devDependency only pins the runtime for npm scripts; this image already is Node 24.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24.21.0-slim
ARG WITH_CLIS=false
ENV NODE_ENV=production
RUN if [ "$WITH_CLIS" = "true" ]; then npm install -g --no-audit --no-fund @anthropic-ai/claude-code@2.1.330 opencode-ai@1.18.33 && npm cache clean --force; fi
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
RUN mkdir -p /app/data /app/workspaces && chown node:node /app/data /app/workspaces
USER node
EXPOSE 7070 9464
ENTRYPOINT ["node", "bin/warren.js"]
CMD ["start", "--config", "warren.yaml"]
