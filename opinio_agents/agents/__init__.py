"""Agent integration: review tools (LangChain, LlamaIndex, MCP), a retriever and chat.

Example:
    >>> from opinio_agents.agents import ReviewFilters
    >>> ReviewFilters(min_rating=4).describe()
    'rating >= 4'
"""

from opinio_agents.agents.agent import AGENT_SYSTEM_PROMPT, create_review_agent
from opinio_agents.agents.chat import ChatAnswer, Citation, ReviewChat
from opinio_agents.agents.filters import ReviewFilters
from opinio_agents.agents.langchain_tools import TOOL_SCHEMAS, make_langchain_tools
from opinio_agents.agents.llamaindex_tools import make_llamaindex_tools
from opinio_agents.agents.mcp_server import build_mcp_server, serve_stdio
from opinio_agents.agents.retriever import OpinioReviewRetriever
from opinio_agents.agents.toolkit import ReviewToolkit

__all__ = [
    "ReviewFilters",
    "ReviewToolkit",
    "make_langchain_tools",
    "make_llamaindex_tools",
    "TOOL_SCHEMAS",
    "OpinioReviewRetriever",
    "ReviewChat",
    "ChatAnswer",
    "Citation",
    "create_review_agent",
    "AGENT_SYSTEM_PROMPT",
    "build_mcp_server",
    "serve_stdio",
]
